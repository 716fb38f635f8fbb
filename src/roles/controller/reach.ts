/** Whether the controller can open a TCP connection to an address an agent advertises. */
import { createConnection } from "node:net";
import { parseHostPort } from "../../util/addr.ts";

/** Undefined when HOST:PORT accepts a connection within `timeoutMs`; else why not (an errno code, or "no answer"). */
export function unreachable(addr: string, timeoutMs = 3000): Promise<string | undefined> {
  const hp = parseHostPort(addr);
  if ("error" in hp) return Promise.resolve(hp.error);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hp.host, port: hp.port });
    const done = (why: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
    socket.once("connect", () => done(undefined));
    socket.once("error", (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
  });
}
