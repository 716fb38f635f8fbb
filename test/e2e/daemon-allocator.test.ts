/**
 * The daemons' allocator setting (util/reexec.ts), on real processes: a controller and an agent
 * started as usual run with MIMALLOC_PURGE_DELAY=-1 under the pid their launcher saw, as its
 * children, with the argv they were given; an agent started with its own value keeps it, one with
 * EBB_REEXEC=0 gets none; and no job process gets the agent's.
 */
import { expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DAEMON_PURGE_DELAY, PURGE_DELAY_VAR } from "../../src/util/reexec.ts";
import { clusterForFile, ROOT, waitFor } from "../support/cluster.ts";

const c = clusterForFile({ agents: 1 });
const MAIN = join(ROOT, "src/main.ts");

const nulList = (file: string) => readFileSync(file, "utf8").split("\0").slice(0, -1);
const environ = (pid: number) => new Map(nulList(`/proc/${pid}/environ`).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
const parentOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
};
const mimalloc = (text: string) => text.split("\n").filter((l) => l.startsWith("MIMALLOC_"));

test("a controller and an agent run with the purge delay under the pid their launcher saw, its children, with their argv", async () => {
  for (const [role, proc] of [["controller", c.controller], ["agent", c.agents.get("node01")!]] as const) {
    expect({ role, delay: environ(proc.pid).get(PURGE_DELAY_VAR) }).toEqual({ role, delay: DAEMON_PURGE_DELAY });
    expect(parentOf(proc.pid)).toBe(process.pid);
    expect(nulList(`/proc/${proc.pid}/cmdline`).slice(0, 3)).toEqual([process.execPath, MAIN, role]);
  }
  // The rest of the environment is the one it was started with.
  expect(environ(c.controller.pid).get("EBB_STATE_DIR")).toBe(c.stateDir);
});

test("no job process gets the agent's purge delay: a command job's ranks, a batch script", async () => {
  const command = await c.submit({ argv: ["sh", "-c", "env > command.env"] });
  const batch = await c.submit({ script: "#!/bin/sh\nenv > batch.env\n", output: join(c.dir, "batch.out") });
  for (const id of [command, batch]) expect((await c.waitJob(id, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
  for (const file of ["command.env", "batch.env"]) {
    const env = c.read(file);
    expect(env).toContain("EBB_JOB_ID=");
    expect({ file, vars: mimalloc(env) }).toEqual({ file, vars: [] });
  }
});

test("an agent started with its own purge delay keeps it; one started with EBB_REEXEC=0 gets none", async () => {
  const started: Subprocess[] = [];
  try {
    for (const [name, extra] of [["own", { [PURGE_DELAY_VAR]: "250" }], ["off", { EBB_REEXEC: "0" }]] as const) {
      const proc = Bun.spawn([process.execPath, MAIN, "agent", "--controller", c.url, "--name", name, "--cpus", "1", "--key-file", join(c.stateDir, "cluster.key"), "--state-dir", join(c.dir, "agents", name)], {
        cwd: c.dir,
        env: { ...c.env, ...extra },
        stdout: "ignore",
        stderr: "ignore",
      });
      started.push(proc);
      await waitFor(`agent ${name} to register`, async () => (await c.api("GET", "/v1/nodes")).json.nodes.some((n: { name: string; state: string }) => n.name === name && n.state === "IDLE"), 60_000);
      expect({ name, delay: environ(proc.pid).get(PURGE_DELAY_VAR) }).toEqual({ name, delay: name === "own" ? "250" : undefined });
    }
  } finally {
    for (const p of started) p.kill("SIGTERM");
    await Promise.all(started.map((p) => p.exited));
  }
});
