/** Which commands start again with the daemons' allocator setting (util/reexec.ts), and when not. */
import { expect, test } from "bun:test";
import { DAEMON_PURGE_DELAY, PURGE_DELAY_VAR, reexecVars } from "../../src/util/reexec.ts";

test("the daemons start again with the purge delay; clients, hidden helpers and no command do not", () => {
  for (const cmd of ["controller", "agent", "up"]) expect(reexecVars(cmd, { PATH: "/bin" })).toEqual({ [PURGE_DELAY_VAR]: DAEMON_PURGE_DELAY });
  for (const cmd of ["run", "submit", "queue", "exec", "warm-rank", "step-root", "srun", "help", "--help", undefined]) expect(reexecVars(cmd, { PATH: "/bin" })).toBeUndefined();
});

test("a purge delay already set is kept (a user's, or the second start's); EBB_REEXEC=0 turns it off, any other value does not", () => {
  for (const value of ["250", "-1", "100", ""]) expect(reexecVars("agent", { [PURGE_DELAY_VAR]: value })).toBeUndefined();
  expect(reexecVars("controller", { EBB_REEXEC: "0" })).toBeUndefined();
  expect(reexecVars("controller", { EBB_REEXEC: "1" })).toEqual({ [PURGE_DELAY_VAR]: DAEMON_PURGE_DELAY });
});
