import { expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shmOwners, sweepStaleShm } from "../../src/roles/agent/shm-sweep.ts";

test("owner pids are read from every kind of ebb shared-memory name, and only from those", () => {
  expect(shmOwners("ebb-adapt-node01-3.0-19100")).toEqual([19100]);
  expect(shmOwners("ebb-cfg-n-7.12-42")).toEqual([42]);
  expect(shmOwners("ebbc-3ld.l3amx1-3lf.omigta")).toEqual([parseInt("3ld", 36), parseInt("3lf", 36)]);
  expect(shmOwners("ebbc-3ld.l3amx1.sock")).toEqual([parseInt("3ld", 36)]);
  for (const other of ["ebb-adapt-", "ebbc-x", "ebbc-x.sock", "sem.foo", "ebb-other-1-2", "pulse-shm-1"]) expect(shmOwners(other)).toBeUndefined();
});

test("files of dead owners are removed; those of live owners and others are kept", () => {
  const dir = mkdtempSync(join(tmpdir(), "ebb-sweep-"));
  const dead = Bun.spawnSync(["true"]).pid; // exited and reaped: its pid is gone
  const live = process.pid;
  const files = {
    deadAdapt: `ebb-adapt-node01-3.0-${dead}`,
    liveAdapt: `ebb-adapt-node01-3.0-${live}`,
    deadRing: `ebbc-${dead.toString(36)}.abc-${dead.toString(36)}.def`,
    halfRing: `ebbc-${dead.toString(36)}.abc-${live.toString(36)}.def`,
    deadSocket: `ebbc-${dead.toString(36)}.abc.sock`,
    liveSocket: `ebbc-${live.toString(36)}.abc.sock`,
    foreign: "something-else-1",
  };
  for (const f of Object.values(files)) writeFileSync(join(dir, f), "x");
  const deadCfg = `ebb-cfg-node01-1.0-${dead}`;
  mkdirSync(join(dir, deadCfg));
  writeFileSync(join(dir, deadCfg, "rank-0"), "x");

  const gone = [files.deadAdapt, files.deadRing, files.deadSocket, deadCfg];
  expect(sweepStaleShm(dir).sort()).toEqual(gone.sort());
  for (const f of [files.liveAdapt, files.halfRing, files.liveSocket, files.foreign]) expect(existsSync(join(dir, f))).toBe(true);
  for (const f of gone) expect(existsSync(join(dir, f))).toBe(false);
});

test("at its start an agent also removes its own node's step files that carry its own pid: an earlier life's, the pid reused", () => {
  const dir = mkdtempSync(join(tmpdir(), "ebb-sweep-"));
  const me = process.pid;
  const parent = process.ppid; // alive, and not this agent
  const earlier = [`ebb-cfg-node-1-7.0.k3x9q-${me}`, `ebb-adapt-node-1-7.0.a0b1-${me}`, `ebb-cfg-node-1-7.0-${me}`];
  const kept = [`ebb-cfg-node-1-x-7.0-${me}`, `ebb-cfg-node-2-7.0-${me}`, `ebb-cfg-node-1-7.0-${parent}`, `ebbc-${me.toString(36)}.abc.sock`];
  for (const n of [...earlier, ...kept]) mkdirSync(join(dir, n));
  expect(sweepStaleShm(dir, { node: "node-1", pid: me }).sort()).toEqual(earlier.sort());
  for (const n of kept) expect(existsSync(join(dir, n))).toBe(true);
  // Without saying who it is, the sweep keeps them all (their owner pid is alive).
  mkdirSync(join(dir, earlier[0]!));
  expect(sweepStaleShm(dir)).toEqual([]);
});

test.skipIf(process.getuid?.() !== 0)("a stale name that is a mount whose file system never answers (a user's, on a directory or file of hers) is left, never entered; the others are removed", async () => {
  // Unfixed: the sweep's lstat of the name, then its recursive remove, waited on the mount: an
  // agent starting on a node where a user left one (or made one, named as a dead process's ring in
  // /tmp) never came up.
  const dir = mkdtempSync(join(tmpdir(), "ebb-sweep-"));
  const dead = Bun.spawnSync(["true"]).pid;
  const mounted = `ebb-cfg-node01-1.0-${dead}`;
  const ring = `ebbc-${dead.toString(36)}.abc-${dead.toString(36)}.def`;
  const plain = `ebb-adapt-node01-2.0-${dead}`;
  mkdirSync(join(dir, mounted));
  writeFileSync(join(dir, ring), "");
  writeFileSync(join(dir, plain), "x");
  const daemons = [join(dir, mounted), join(dir, ring)].map((at, i) =>
    Bun.spawn(["/bin/sh", "-c", `exec 3<>/dev/fuse && mount -t fuse -o fd=3,rootmode=${i === 0 ? 40000 : 100000},user_id=0,group_id=0,allow_other ebb-hung "$0" && exec sleep 100000`, at], { stdout: "ignore", stderr: "inherit" }),
  );
  try {
    for (const at of [mounted, ring]) while (!readFileSync("/proc/self/mountinfo", "utf8").includes(` ${join(dir, at)} `)) await Bun.sleep(20);
    expect(sweepStaleShm(dir)).toEqual([plain]);
    // Listed, not looked at: a stat of either would wait.
    expect(readdirSync(dir).sort()).toEqual([mounted, ring].sort());
  } finally {
    for (const at of [mounted, ring]) Bun.spawnSync(["umount", "-l", join(dir, at)]);
    for (const d of daemons) d.kill("SIGKILL");
  }
});
