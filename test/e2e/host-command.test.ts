/**
 * A host rule's command (cmd.NAME) as the agent runs it: its exit status is the input; a root
 * agent runs it as the rule's user, never root; one that outlives its timeout is killed, with its
 * children, and leaves no value. Needs root (as the other tests of what a root agent does).
 */
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HostCommand } from "../../src/roles/agent/host-command.ts";
import { pidAlive, waitFor } from "../support/cluster.ts";

const command = (run: string[], more: Partial<{ timeout: number; user: string }> = {}) =>
  new HostCommand({ name: "cmd.t", thresholds: [1, 2, undefined], smoothing: 0, command: { run, timeout: more.timeout ?? 5, every: 0.01, user: more.user ?? "nobody" } });

test("its exit status is the input, and it runs as nobody", async () => {
  expect(process.getuid!()).toBe(0);
  const dir = mkdtempSync(join(tmpdir(), "ebb-host-cmd-"));
  chmodSync(dir, 0o777);
  try {
    const c = command(["/bin/sh", "-c", `id -un > ${dir}/who; exit 3`]);
    expect(c.latest()).toBeUndefined();
    c.tick(Date.now());
    expect(await waitFor("the command's status", () => c.latest())).toBe(3);
    expect(readFileSync(join(dir, "who"), "utf8").trim()).toBe("nobody");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a root agent refuses to run it as root", () => {
  expect(() => command(["/bin/true"], { user: "root" })).toThrow("hostStates.rules.cmd.t.user: root is root; a host rule's command runs as an unprivileged user");
  expect(() => command(["/bin/true"], { user: "no_such_user_x" })).toThrow("hostStates.rules.cmd.t.user: user no_such_user_x does not exist on this node");
});

test("one that outlives its timeout is killed with its children and gives no value", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ebb-host-cmd-"));
  chmodSync(dir, 0o777);
  try {
    const c = command(["/bin/sh", "-c", `sleep 60 & echo $! > ${dir}/child; wait`], { timeout: 0.3 });
    c.tick(Date.now());
    const child = Number(await waitFor("the child's pid", () => readFileSync(join(dir, "child"), "utf8").trim() || undefined));
    await waitFor("the child to be killed", () => !pidAlive(child));
    expect(c.latest()).toBeUndefined();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
