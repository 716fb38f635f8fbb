/**
 * What a thread may do inside `asUser` (identity.ts), where it skips work: a user whose only group
 * is her own gets no supplementary list (the effective gid alone), a call inside a switch to the
 * same user switches nothing, and the thread's own groups are read once. Her rights must be those
 * of a full switch: her group's files, and not root's group's; and after every switch, nested or
 * not, the thread is root's again with its own groups.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureUser } from "../support/users.ts";
import { asUser, lookupIdentity } from "../../src/roles/identity.ts";

const root = process.getuid?.() === 0;
let dir = "";

beforeAll(() => {
  if (!root) return;
  ensureUser("ebbthra");
  ensureUser("ebbthrb");
  dir = mkdtempSync(join(tmpdir(), "ebb-as-user-"));
  chmodSync(dir, 0o755);
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The calling thread's effective uid and gid and its supplementary groups, from its status file. */
function ids(): { euid: number; egid: number; groups: number[] } {
  const s = readFileSync("/proc/thread-self/status", "utf8");
  const field = (k: string) => /^\S+:\s+(.*)$/m.exec(s.split("\n").find((l) => l.startsWith(`${k}:`)) ?? "")?.[1]?.trim().split(/\s+/).filter(Boolean).map(Number) ?? [];
  return { euid: field("Uid")[1]!, egid: field("Gid")[1]!, groups: field("Groups") };
}

/** Whether the calling thread may read `path` (EACCES: no). */
function canRead(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EACCES") return false;
    throw e;
  }
}

test.skipIf(!root)("a user with only her own group reads her group's files and not root's group's, nested or not, and the thread comes back root's", () => {
  const a = lookupIdentity("ebbthra");
  const b = lookupIdentity("ebbthrb");
  expect(a.groups.every((g) => g === a.gid)).toBe(true);
  const hers = join(dir, "group-hers");
  const roots = join(dir, "group-root");
  for (const [path, gid] of [[hers, a.gid], [roots, 0]] as const) {
    writeFileSync(path, "x", { mode: 0o040 });
    chownSync(path, 0, gid);
  }
  const before = ids();
  const seen = asUser(a, () => {
    const outer = { ...ids(), hers: canRead(hers), roots: canRead(roots) };
    const inner = asUser(a, () => ({ ...ids(), hers: canRead(hers), roots: canRead(roots) }));
    const after = { ...ids(), hers: canRead(hers) };
    return { outer, inner, after };
  });
  for (const s of [seen.outer, seen.inner]) expect(s).toMatchObject({ euid: a.uid, egid: a.gid, hers: true, roots: false });
  expect(seen.after).toMatchObject({ euid: a.uid, egid: a.gid, hers: true });
  expect(ids()).toEqual(before);
  // A switch to another user inside hers is refused (her ids may not take his), and hers goes on.
  const again = asUser(a, () => {
    expect(() => asUser(b, () => canRead(hers))).toThrow();
    return asUser(a, () => ({ ...ids(), hers: canRead(hers), roots: canRead(roots) }));
  });
  expect(again).toMatchObject({ euid: a.uid, egid: a.gid, hers: true, roots: false });
  expect(ids()).toEqual(before);
  expect(canRead(roots)).toBe(true);
});
