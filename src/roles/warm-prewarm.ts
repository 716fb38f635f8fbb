/**
 * Runs the code of a rank's wire-up that needs no socket once, in this process, against a stand-in
 * PMI server: the PMI client's handshake, put, fence, gets and ebb's extension commands, and the
 * business-card parser. A warm rank (roles/warm-rank.ts) calls it while it waits for a claim, so
 * that the rank it becomes finds that code compiled: JavaScriptCore compiles a function at its first
 * call, and cold, a joining rank's PMI handshake alone took ~4.7 ms of CPU (0.1-0.3 ms warm), on
 * the cores a grow's other ranks wait for. Nothing leaves the process: no socket, no file, no
 * environment, nothing of any job's.
 */
import { CMD, cardKey } from "../proto/adapt.ts";
import { PmiClient, type PmiTransport } from "../pmi/client.ts";
import { formatV1 } from "../pmi/v1.ts";
import { parseCard } from "../comm/world.ts";

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

function standIn(): PmiTransport {
  let deliver: (chunk: Uint8Array | string) => void = () => {};
  return {
    write(text) {
      const answers = text.split("\n").filter((l) => l !== "").map(reply);
      // Bytes, on a later turn, as a socket's data comes.
      queueMicrotask(() => deliver(new TextEncoder().encode(answers.join(""))));
    },
    close() {},
    listen(data) {
      deliver = data;
    },
  };
}

export async function prewarm(): Promise<void> {
  const pmi = await PmiClient.over(standIn(), { rank: 0, size: 2, pipelined: true });
  await Promise.all([pmi.put(cardKey(0, 1), CARD), pmi.fence()]);
  const cards = await Promise.all([0, 1].map((r) => pmi.get(cardKey(r, 1))));
  for (const c of cards) parseCard(c!);
  await pmi.command(CMD.probe, { index: "1" });
  await pmi.command(CMD.begin);
  await pmi.command(CMD.commit);
  await pmi.command(CMD.perf, { iterations: "1", loop_ns: "1", comm_ns: "1" });
  pmi.close();
}
