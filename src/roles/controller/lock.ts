/**
 * One controller per state directory: `controller.lock` holds the pid and host of the controller
 * that owns it, created with O_EXCL so that of two controllers starting at once only one wins. A
 * lock whose process is gone (same host, pid not running) is stale and taken over. On a full disk
 * the lock is still created, but empty: it is held all the same (another controller refuses it,
 * saying it names no one), and removed at release.
 */
import { closeSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { pidAlive } from "../../util/pid.ts";

const Holder = z.object({ pid: z.int(), host: z.string(), startedAt: z.string(), listen: z.string().optional() });
type Holder = z.infer<typeof Holder>;

/** A live controller holds the state directory. */
export class StateDirHeld extends Error {}


function readHolder(path: string): Holder | undefined {
  try {
    const parsed = Holder.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

/** Takes the state dir's lock or throws StateDirHeld naming the holder; returns the release. */
export function lockStateDir(stateDir: string, listen: string): () => void {
  const path = join(stateDir, "controller.lock");
  const me: Holder = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), listen };
  let named = true;
  for (let attempt = 0; ; attempt++) {
    let fd: number | undefined;
    try {
      fd = openSync(path, "wx", 0o600);
      writeSync(fd, `${JSON.stringify(me)}\n`);
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Created, but no room for its contents: held, unnamed.
      if (fd !== undefined && (code === "ENOSPC" || code === "EDQUOT")) {
        named = false;
        break;
      }
      if (code !== "EEXIST" || attempt > 3) throw e;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    const holder = readHolder(path);
    // A lock being written right now reads as empty: the other controller is starting.
    if (!holder) {
      if (attempt < 3) {
        Bun.sleepSync(50);
        continue;
      }
      throw new StateDirHeld(`${path} exists but does not name its controller; if none is running on ${stateDir}, remove that file`);
    }
    const local = holder.host === me.host;
    if (local && (!pidAlive(holder.pid) || holder.pid === process.pid)) {
      rmSync(path, { force: true }); // stale: its controller is gone
      continue;
    }
    throw new StateDirHeld(
      `the state dir ${stateDir} is in use by another controller (pid ${holder.pid} on ${holder.host}${holder.listen ? `, listening on ${holder.listen}` : ""}, since ${holder.startedAt}); ` +
        (local ? "stop it first, or give --state-dir another directory" : `stop it first, or if it is gone remove ${path}`),
    );
  }
  return () => {
    const mine = named ? readHolder(path)?.pid === process.pid && readHolder(path)?.host === me.host : sizeOf(path) === 0;
    if (mine) rmSync(path, { force: true });
  };
}
