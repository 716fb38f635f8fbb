/** Reading a file that a job's user controls, from the agent. */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/**
 * The text of `path` if it is a regular file of at most `maxBytes` (else an EFBIG error naming the
 * cap, `capName`), undefined if it does not exist. Not a symlink, and never blocking: a FIFO or a device
 * planted in its place is refused instead of stalling the agent.
 */
export function readRegularFile(path: string, maxBytes: number, capName: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP") throw Object.assign(new Error(`${path} is a symbolic link`), { code });
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: "EINVAL" });
    if (st.size > maxBytes) throw Object.assign(new Error(`${path} is ${st.size} bytes, over the ${maxBytes} the agent reads (${capName})`), { code: "EFBIG" });
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.toString("utf8", 0, got);
  } finally {
    closeSync(fd);
  }
}
