/**
 * The controller's allocator setting (util/reexec.ts), on real processes: a controller started as
 * usual runs with MIMALLOC_PURGE_DELAY=-1 under the pid its launcher saw, as its child, with the
 * argv it was given; an agent keeps the purge delay it was started with (here a user's, 250 ms),
 * and no job process gets it; a controller started with its own value keeps it, one started with
 * EBB_REEXEC=0 gets none. The controller also runs without JavaScriptCore's FTL tier
 * (BUN_JSC_useFTLJIT=0), which the agent and the jobs do not get.
 */
import { expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DAEMON_PURGE_DELAY, FTL_VAR, PURGE_DELAY_VAR } from "../../src/util/reexec.ts";
import { clusterForFile, freePort, ROOT, waitFor } from "../support/cluster.ts";

const c = clusterForFile({ agents: 1, agentEnv: { [PURGE_DELAY_VAR]: "250" } });
const MAIN = join(ROOT, "src/main.ts");

const nulList = (file: string) => readFileSync(file, "utf8").split("\0").slice(0, -1);
const environ = (pid: number) => new Map(nulList(`/proc/${pid}/environ`).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
const parentOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
};

test("the controller runs with the purge delay under the pid its launcher saw, its child, with its argv and environment; the agent keeps its own", async () => {
  const pid = c.controller.pid;
  expect(environ(pid).get(PURGE_DELAY_VAR)).toBe(DAEMON_PURGE_DELAY);
  expect(parentOf(pid)).toBe(process.pid);
  expect(nulList(`/proc/${pid}/cmdline`)).toEqual([process.execPath, MAIN, "controller", "--listen", `127.0.0.1:${c.port}`, "--state-dir", c.stateDir, "--heartbeat", "1", "--kill-wait", "2"]);
  expect(environ(pid).get("EBB_STATE_DIR")).toBe(c.stateDir);
  expect(environ(c.agents.get("node01")!.pid).get(PURGE_DELAY_VAR)).toBe("250");
  expect(environ(pid).get(FTL_VAR)).toBe("0");
  expect(environ(c.agents.get("node01")!.pid).has(FTL_VAR)).toBe(false);
});

test("no job process gets the agent's purge delay: a command job's rank, a batch script", async () => {
  const command = await c.submit({ argv: ["sh", "-c", "env > command.env"] });
  const batch = await c.submit({ script: "#!/bin/sh\nenv > batch.env\n", output: join(c.dir, "batch.out") });
  for (const id of [command, batch]) expect((await c.waitJob(id, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
  for (const file of ["command.env", "batch.env"]) {
    const env = c.read(file);
    expect(env).toContain("EBB_JOB_ID=");
    expect({ file, vars: env.split("\n").filter((l) => l.startsWith("MIMALLOC_") || l.startsWith(`${FTL_VAR}=`)) }).toEqual({ file, vars: [] });
  }
});

test("a controller started with its own purge delay keeps it; one started with EBB_REEXEC=0 gets none", async () => {
  const started: Subprocess[] = [];
  try {
    for (const [name, extra, delay] of [["own", { [PURGE_DELAY_VAR]: "250" }, "250"], ["off", { EBB_REEXEC: "0" }, undefined]] as const) {
      const port = await freePort();
      const proc = Bun.spawn([process.execPath, MAIN, "controller", "--listen", `127.0.0.1:${port}`, "--state-dir", join(c.dir, name)], { cwd: c.dir, env: { ...c.env, ...extra }, stdout: "ignore", stderr: "ignore" });
      started.push(proc);
      await waitFor(`controller ${name} to listen`, async () => (await fetch(`http://127.0.0.1:${port}/v1/health`)).ok, 60_000);
      expect({ name, delay: environ(proc.pid).get(PURGE_DELAY_VAR) }).toEqual({ name, delay });
    }
  } finally {
    for (const p of started) p.kill("SIGTERM");
    await Promise.all(started.map((p) => p.exited));
  }
});
