/**
 * The `ebb` command that job processes find first on their PATH, so that a batch script can run
 * `ebb run`. It must be reachable by the job's user: an agent running as root keeps it under
 * /run/ebb (0755 directories), not in its state dir, which is root's alone; other agents keep it
 * in their state dir, whose owner runs every job.
 */
import { chmodSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ebbCommand, isCompiled } from "../../util/self.ts";
import { agentIsRoot } from "../identity.ts";
import { pidAlive } from "../../util/pid.ts";

const RUN_DIR = "/run/ebb";


/** Directories of agents that are gone (their names end with the agent's pid). */
function sweep(): void {
  let names: string[];
  try {
    names = readdirSync(RUN_DIR);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^agent-.+-(\d+)$/.exec(name)?.[1]);
    if (pid > 0 && pid !== process.pid && !pidAlive(pid)) rmSync(join(RUN_DIR, name), { recursive: true, force: true });
  }
}

/** Writes the command; `remove` takes its directory away when the agent stops. */
export function installEbbCommand(stateDir: string, node: string): { dir: string; remove(): void } {
  let dir = join(stateDir, "bin");
  if (agentIsRoot()) {
    sweep();
    dir = join(RUN_DIR, `agent-${node}-${process.pid}`);
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    chmodSync(RUN_DIR, 0o755);
    chmodSync(dir, 0o755);
  } else mkdirSync(dir, { recursive: true });
  const path = join(dir, "ebb");
  rmSync(path, { force: true });
  if (isCompiled()) symlinkSync(process.execPath, path);
  else {
    writeFileSync(path, `#!/bin/sh\nexec ${ebbCommand().map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ")} "$@"\n`);
    chmodSync(path, 0o755);
  }
  return { dir, remove: () => agentIsRoot() && rmSync(dir, { recursive: true, force: true }) };
}
