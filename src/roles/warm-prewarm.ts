/**
 * Runs a rank's PMI wire-up once, in this process, against a stand-in PMI server on the other end of
 * a socketpair: the PMI client's connection over an inherited descriptor (as `PMI_FD`), its
 * handshake, put, fence, gets and ebb's extension commands, and the business-card parser; it
 * makes (and drops) a CFG loop detector, as every rank's initAdapt does, and a transport that does
 * not listen, worlds and an intercommunicator over it (`worlds`). A warm rank (roles/warm-rank.ts) calls it while it waits for a claim, so that the rank it becomes finds
 * that code compiled: JavaScriptCore compiles a function at its first call, and cold, a joining
 * rank's PMI handshake alone took ~4.7 ms of CPU (0.1-0.3 ms warm), on the cores a grow's other
 * ranks wait for. Nothing leaves the process: the socketpair is anonymous and closed after, no
 * listener, no file, no environment, nothing of any job's.
 */
import { CMD, cardKey } from "../proto/adapt.ts";
import { FFIType } from "bun:ffi";
import { libcSymbols } from "../util/libc.ts";
import { PmiClient } from "../pmi/client.ts";
import { bunConnect } from "../pmi/bun-socket.ts";
import { formatV1 } from "../pmi/v1.ts";
import { createWorld, parseCard } from "../comm/world.ts";
import { Transport } from "../comm/transport.ts";
import { contextOf, Intercomm } from "../comm/comm.ts";
import { Detector } from "../cfg/detector.ts";
import { createHash } from "node:crypto";

const CARD = JSON.stringify({ id: "prewarm", node: "prewarm", unix: "/nonexistent/ebbc-prewarm.sock", tcp: "127.0.0.1:1" });

/** The replies of ebb's agent (PMI-1, pipelined: in request order), enough for the calls below. */
function reply(line: string): string {
  const cmd = /^cmd=([\w-]+)/.exec(line)?.[1] ?? "";
  switch (cmd) {
    case "init":
      return formatV1("response_to_init", [["pmi_version", 1], ["pmi_subversion", 1], ["rc", 0]]);
    case "get_maxes":
      return formatV1("maxes", [["kvsname_max", 256], ["keylen_max", 256], ["vallen_max", 1024], ["rc", 0]]);
    case "get_my_kvsname":
      return formatV1("my_kvsname", [["kvsname", "prewarm"], ["rc", 0]]);
    case "put":
      return formatV1("put_result", [["rc", 0]]);
    case "barrier_in":
      return formatV1("barrier_out", [["rc", 0]]);
    case "get":
      return formatV1("get_result", [["rc", 0], ["value", CARD]]);
    case CMD.begin:
      return formatV1(`${cmd}_result`, [["rc", 0], ["generation", 1], ["staying", 1], ["leaving", 0], ["joining", 1], ["rank", 1], ["size", 2], ["oldrank", -1], ["oldsize", 1]]);
    case CMD.probe:
      return formatV1(`${cmd}_result`, [["rc", 0], ["pending", 0], ["status", "staying"]]);
    default:
      return formatV1(`${cmd}_result`, [["rc", 0]]);
  }
}

const AF_UNIX = 1;
const SOCK_STREAM = 1;
const SOCK_CLOEXEC = 0o2000000;

/** Two connected anonymous sockets (socketpair(2)), close-on-exec. */
function socketPair(): [number, number] {
  const lib = libcSymbols<{ socketpair(domain: number, type: number, protocol: number, fds: Int32Array): number }>({ socketpair: { args: [FFIType.i32, FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
  if (!lib) throw new Error("no socketpair in the C library");
  const fds = new Int32Array(2);
  if (lib.socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) !== 0) throw new Error("socketpair failed");
  return [fds[0]!, fds[1]!];
}

/** The server's end: answers each request line as ebb's agent would (PMI-1, in order). */
function standIn(fd: number): Promise<Bun.Socket<undefined>> {
  let pending = "";
  const socket: Bun.SocketHandler<undefined> = {
    data(sock, chunk) {
      pending += new TextDecoder().decode(chunk);
      const lines = pending.split("\n");
      pending = lines.pop()!;
      if (lines.length > 0) sock.write(lines.map(reply).join(""));
    },
  };
  return bunConnect({ fd }, socket);
}

/**
 * A rank's transport (without its listeners: nothing can reach this process), a world of 8 over it
 * and a window's intercommunicator, as initAdapt and adaptBegin build them; and the job token's
 * digest each HELLO carries. Cold, these cost a joining rank ~2 ms of CPU on the cores its grow waits for.
 */
async function worlds(): Promise<void> {
  createHash("sha256").update("ebb/comm hello\0prewarm").digest("hex");
  const t = Transport.unlistened({ node: "prewarm", host: "127.0.0.1", runDir: "/nonexistent" });
  const cards = [t.card, ...Array.from({ length: 7 }, (_, i) => parseCard(JSON.stringify({ id: `prewarm.${i}`, node: `prewarm${i % 2}`, unix: `/nonexistent/ebbc-${i}.sock`, tcp: "127.0.0.1:1" })))];
  const world = createWorld(t, cards, { generation: 1 });
  const next = createWorld(t, cards, { generation: 2 });
  const intercomm = new Intercomm(t, { ctx: contextOf(2, 1), rank: 0, local: cards.slice(0, 4), remote: cards.slice(4), name: "adapt-intercomm", parent: world });
  for (const c of [intercomm, world, next]) c.invalidate("warm-up");
  await t.close();
}

/** A warm-up that takes longer than this fails: the warm rank then ends (its pool starts another, or ranks start cold). */
const LIMIT_MS = 5_000;

/**
 * Rejects if anything fails or takes longer than LIMIT_MS: the caller then ends, rather than hand
 * a job a process that may still hold a socket of the warm-up's.
 */
export async function prewarm(): Promise<void> {
  const [client, server] = socketPair();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const run = async () => {
    const agent = await standIn(server);
    const pmi = await PmiClient.connect({ PMI_FD: String(client), PMI_RANK: "0", PMI_SIZE: "2", EBB_PMI_PIPELINE: "1" });
    await Promise.all([pmi.put(cardKey(0, 1), CARD), pmi.fence()]);
    const cards = await Promise.all([0, 1].map((r) => pmi.get(cardKey(r, 1))));
    for (const c of cards) parseCard(c!);
    await pmi.command(CMD.probe, { index: "1" });
    await pmi.command(CMD.begin);
    await pmi.command(CMD.commit);
    await pmi.command(CMD.perf, { iterations: "1", loop_ns: "1", comm_ns: "1" });
    new Detector({ interval: 60e9, start: 0 });
    pmi.close();
    agent.end();
    await worlds();
  };
  try {
    await Promise.race([run(), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`it took longer than ${LIMIT_MS} ms`)), LIMIT_MS)))]);
  } finally {
    clearTimeout(timer);
  }
}
