/**
 * A thread of thread-ids.test.ts: switches to a user with `asUser` and creates files, in the order
 * a shared stage word sets (0: start, 1: the first thread holds its user's ids, 2: the second has
 * created its file as its own user).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { asUser, type Identity } from "../../src/roles/identity.ts";

declare const self: Worker;
export type AsUserThreadRequest = { role: "holder" | "switcher"; id: Identity; dir: string; stage: SharedArrayBuffer };
/** `mainEuid`: the process's main thread's effective uid while the holder held its user's ids (the switcher reads it). */
export type AsUserThreadReply = { ownEuids: number[]; mainEuid?: number } | { error: string };

/** The effective uid of a thread, from its status file. */
const euidOf = (statusPath: string) => Number(/^Uid:\s+\d+\s+(\d+)/m.exec(readFileSync(statusPath, "utf8"))![1]);

self.onmessage = ({ data: r }: MessageEvent<AsUserThreadRequest>) => {
  const stage = new Int32Array(r.stage);
  const ownEuids: number[] = [];
  const make = (name: string) => {
    writeFileSync(join(r.dir, name), name);
    ownEuids.push(euidOf("/proc/thread-self/status"));
  };
  try {
    if (r.role === "holder") {
      asUser(r.id, () => {
        make("holder-1");
        Atomics.store(stage, 0, 1);
        Atomics.notify(stage, 0);
        while (Atomics.load(stage, 0) !== 2) Atomics.wait(stage, 0, 1, 50);
        make("holder-2");
      });
      self.postMessage({ ownEuids } satisfies AsUserThreadReply);
    } else {
      while (Atomics.load(stage, 0) !== 1) Atomics.wait(stage, 0, 0, 50);
      const mainEuid = euidOf(`/proc/${process.pid}/task/${process.pid}/status`);
      asUser(r.id, () => make("switcher"));
      Atomics.store(stage, 0, 2);
      Atomics.notify(stage, 0);
      self.postMessage({ ownEuids, mainEuid } satisfies AsUserThreadReply);
    }
  } catch (e) {
    Atomics.store(stage, 0, 2);
    Atomics.notify(stage, 0);
    self.postMessage({ error: (e as Error).message } satisfies AsUserThreadReply);
  }
};
