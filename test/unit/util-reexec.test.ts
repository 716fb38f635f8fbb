/** Which commands start again with the controller's allocator setting (util/reexec.ts), and when not. */
import { expect, test } from "bun:test";
import { DAEMON_PURGE_DELAY, FTL_VAR, PURGE_DELAY_VAR, reexecVars, withoutAllocatorSettings } from "../../src/util/reexec.ts";

test("the controller and ebb up start again with the purge delay, the controller also without FTL; agents, clients, hidden helpers and no command do not", () => {
  expect(reexecVars("controller", { PATH: "/bin" })).toEqual({ [PURGE_DELAY_VAR]: DAEMON_PURGE_DELAY, [FTL_VAR]: "0" });
  // Its agents start jobs with its environment: a job's Bun keeps its tiers.
  expect(reexecVars("up", { PATH: "/bin" })).toEqual({ [PURGE_DELAY_VAR]: DAEMON_PURGE_DELAY });
  for (const cmd of ["agent", "run", "submit", "queue", "exec", "warm-rank", "step-root", "srun", "help", "--help", undefined]) expect(reexecVars(cmd, { PATH: "/bin" })).toBeUndefined();
});

test("a purge delay already set is kept (a user's, or the second start's); EBB_REEXEC=0 turns it off, any other value does not", () => {
  for (const value of ["250", "-1", "100", ""]) expect(reexecVars("controller", { [PURGE_DELAY_VAR]: value })).toBeUndefined();
  expect(reexecVars("up", { EBB_REEXEC: "0" })).toBeUndefined();
  expect(reexecVars("controller", { EBB_REEXEC: "1" })).toEqual({ [PURGE_DELAY_VAR]: DAEMON_PURGE_DELAY, [FTL_VAR]: "0" });
});

test("an FTL setting in the controller's environment is kept, whatever its value", () => {
  for (const value of ["1", "0", "true"]) expect(reexecVars("controller", { [FTL_VAR]: value })).toEqual({ [PURGE_DELAY_VAR]: DAEMON_PURGE_DELAY });
});

test("the agents ebb up --slurm starts get none of its mimalloc settings, and all of the rest", () => {
  expect(withoutAllocatorSettings({ PATH: "/bin", [PURGE_DELAY_VAR]: "-1", MIMALLOC_VERBOSE: "1", EBB_LOG: "warn", MY_MIMALLOC_NOTE: "x" })).toEqual({ PATH: "/bin", EBB_LOG: "warn", MY_MIMALLOC_NOTE: "x" });
});
