/**
 * The `ebb` command that job processes find first on their PATH, so that a batch script can run
 * `ebb run`, with an `srun` beside it (`ebb srun`: a Slurm script's steps) and an `scontrol` (`ebb scontrol`: its host lists); and a `bun` command they find last, so that `bun app.ts` runs on a node with no bun
 * installed: it is `ebb exec --bun`, this ebb's own runtime with ebb/comm and ebb/epop inside
 * (a bun on the job's PATH comes first and wins). Both must be reachable by the job's user: an
 * agent running as root keeps them under /run/ebb (0755 directories), not in its state dir, which
 * is root's alone; other agents keep them in their state dir, whose owner runs every job.
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

const quoted = (argv: string[]) => argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");

/** A new file each time (never rewritten in place: a shell may be reading the old one). */
function script(path: string, text: string): void {
  rmSync(path, { force: true });
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

/**
 * Writes the commands: `dir` (ebb, srun, scontrol) goes first on job processes' PATH, `fallback` (bun) last;
 * `remove` takes them away when the agent stops.
 */
export function installEbbCommand(stateDir: string, node: string): { dir: string; fallback: string; remove(): void } {
  let dir = join(stateDir, "bin");
  if (agentIsRoot()) {
    sweep();
    dir = join(RUN_DIR, `agent-${node}-${process.pid}`);
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    chmodSync(RUN_DIR, 0o755);
    chmodSync(dir, 0o755);
  } else mkdirSync(dir, { recursive: true });
  const path = join(dir, "ebb");
  if (isCompiled()) {
    rmSync(path, { force: true });
    symlinkSync(process.execPath, path);
  } else script(path, `#!/bin/sh\nexec ${quoted(ebbCommand())} "$@"\n`);
  // Slurm scripts' srun: a step of the job they run in (cli/srun.ts maps srun's flags to ebb run's).
  script(join(dir, "srun"), `#!/bin/sh\n# srun in an ebb job: ebb run, with srun's flags and defaults.\nexec ${quoted([...ebbCommand(), "srun"])} "$@"\n`);
  // Their scontrol: the host-list idiom (cli/scontrol.ts); a host's own Slurm would ask another cluster.
  script(join(dir, "scontrol"), `#!/bin/sh\n# scontrol in an ebb job: show hostnames / hostlist.\nexec ${quoted([...ebbCommand(), "scontrol"])} "$@"\n`);
  const fallback = join(dir, "fallback");
  mkdirSync(fallback, { recursive: true, mode: 0o755 });
  chmodSync(fallback, 0o755);
  script(join(fallback, "bun"), `#!/bin/sh\n# No bun on this node's PATH: ebb's own runtime, with ebb/comm and ebb/epop.\nexec ${quoted([...ebbCommand(), "exec", "--bun", "--"])} "$@"\n`);
  return { dir, fallback, remove: () => agentIsRoot() && rmSync(dir, { recursive: true, force: true }) };
}
