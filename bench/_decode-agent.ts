/**
 * Micro-bench (not in `npm run bench`): CPU µs per decode of the controller's messages to an agent,
 * as the agent's thread runs them (util/jit.ts's startup policy). Messages: one JSON text a line.
 *   bun bench/_decode-agent.ts MESSAGES_FILE [ROUNDS]
 * There is no switch that records them, on purpose: a job.start carries the job's token and
 * credential. To capture, add a temporary `appendFileSync(FILE, ev.data + "\n")` before the
 * `decode` in proto/channel.ts's message handler, run null jobs through a controller and agents
 * (`ebb up` shares that channel only with its remote agents: use separate `ebb agent` processes),
 * keep the lines that agents received, and take the line out again.
 */
import { readFileSync } from "node:fs";
import { startupPolicy } from "../src/util/jit.ts";

startupPolicy();
const { ControllerToAgent } = await import("../src/proto/agent.ts");
const { decode } = await import("../src/proto/channel.ts");
const texts = readFileSync(process.argv[2]!, "utf8").split("\n").filter(Boolean);
const rounds = Number(process.argv[3] ?? 10);
const byKind = new Map<string, string[]>();
for (const t of texts) {
  const k = (JSON.parse(t) as { t: string }).t;
  byKind.set(k, [...(byKind.get(k) ?? []), t]);
}
// Rounds of every message once, interleaved as an agent receives them; µs per decode of each kind per round.
const sums = new Map<string, number[]>();
for (let r = 0; r < rounds; r++)
  for (const [kind, list] of byKind) {
    const t0 = process.cpuUsage();
    for (const t of list) if (!decode(ControllerToAgent, t).ok) throw new Error(`${kind} did not decode`);
    const d = process.cpuUsage(t0);
    const row = sums.get(kind) ?? [];
    row.push((d.user + d.system) / list.length);
    sums.set(kind, row);
  }
for (const [kind, row] of sums) console.log(`${kind} (${byKind.get(kind)!.length}): first ${row[0]!.toFixed(0)} µs, then ${row.slice(1).map((x) => x.toFixed(0)).join(" ")}`);
