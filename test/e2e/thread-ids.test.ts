/**
 * Two agent threads of one process switching to two different real users at once (as `ebb up
 * --agent-threads 2` does): each file is created with its own thread's user's ids, and the main
 * thread keeps root's meanwhile. The holder switches to its user and waits inside `asUser` while
 * the switcher switches to another user and creates its file; then the holder creates its second
 * file. With a switch of the whole process's ids (glibc's seteuid, Bun's process.seteuid) the
 * holder's second file is the switcher's user's and the main thread runs as the holder's user.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureUser } from "../support/users.ts";
import { lookupIdentity } from "../../src/roles/identity.ts";
import type { AsUserThreadReply, AsUserThreadRequest } from "../support/as-user-thread.ts";

const root = process.getuid?.() === 0;
let dir = "";

beforeAll(() => {
  if (!root) return;
  ensureUser("ebbthra");
  ensureUser("ebbthrb");
  dir = mkdtempSync(join(tmpdir(), "ebb-thread-ids-"));
  chmodSync(dir, 0o1777);
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function run(request: AsUserThreadRequest): Promise<AsUserThreadReply> {
  const w = new Worker(new URL("../support/as-user-thread.ts", import.meta.url).href);
  return new Promise<AsUserThreadReply>((resolve) => {
    w.onmessage = ({ data }: MessageEvent<AsUserThreadReply>) => resolve(data);
    w.onerror = (e) => resolve({ error: e.message });
    w.postMessage(request);
  }).finally(() => w.terminate());
}

test.skipIf(!root)("two threads switch to two users at once, each with its own ids", async () => {
  const a = lookupIdentity("ebbthra");
  const b = lookupIdentity("ebbthrb");
  const stage = new SharedArrayBuffer(4);
  const [holder, switcher] = await Promise.all([run({ role: "holder", id: a, dir, stage }), run({ role: "switcher", id: b, dir, stage })]);
  expect(holder).toEqual({ ownEuids: [a.uid, a.uid] });
  expect(switcher).toEqual({ ownEuids: [b.uid], mainEuid: 0 });
  const owner = (name: string) => {
    const st = statSync(join(dir, name));
    return [st.uid, st.gid];
  };
  expect(owner("holder-1")).toEqual([a.uid, a.gid]);
  expect(owner("holder-2")).toEqual([a.uid, a.gid]);
  expect(owner("switcher")).toEqual([b.uid, b.gid]);
  // And this thread is root still: it may read what only root may.
  expect(process.geteuid?.()).toBe(0);
  expect(statSync("/root").isDirectory()).toBe(true);
});
