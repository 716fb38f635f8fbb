/** Which commands start again with the controller's allocator setting (util/reexec.ts), and when not. */
import { expect, test } from "bun:test";
import { DAEMON_PURGE_DELAY, PURGE_DELAY_VAR, reexecVars, withoutAllocatorSettings } from "../../src/util/reexec.ts";

test("the controller and ebb up start again with the purge delay; agents, clients, hidden helpers and no command do not", () => {
  for (const cmd of ["controller", "up"]) expect(reexecVars(cmd, { PATH: "/bin" })).toEqual({ [PURGE_DELAY_VAR]: DAEMON_PURGE_DELAY });
  for (const cmd of ["agent", "run", "submit", "queue", "exec", "warm-rank", "step-root", "srun", "help", "--help", undefined]) expect(reexecVars(cmd, { PATH: "/bin" })).toBeUndefined();
});

test("a purge delay already set is kept (a user's, or the second start's); EBB_REEXEC=0 turns it off, any other value does not", () => {
  for (const value of ["250", "-1", "100", ""]) expect(reexecVars("controller", { [PURGE_DELAY_VAR]: value })).toBeUndefined();
  expect(reexecVars("up", { EBB_REEXEC: "0" })).toBeUndefined();
  expect(reexecVars("controller", { EBB_REEXEC: "1" })).toEqual({ [PURGE_DELAY_VAR]: DAEMON_PURGE_DELAY });
});

test("the agents ebb up --slurm starts get none of its mimalloc settings, and all of the rest", () => {
  expect(withoutAllocatorSettings({ PATH: "/bin", [PURGE_DELAY_VAR]: "-1", MIMALLOC_VERBOSE: "1", EBB_LOG: "warn", MY_MIMALLOC_NOTE: "x" })).toEqual({ PATH: "/bin", EBB_LOG: "warn", MY_MIMALLOC_NOTE: "x" });
});
