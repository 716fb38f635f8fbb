/**
 * The stall bench's probe, in a process of its own (the fuzzing client's work never delays it):
 * GET /v1/health one after the other until stdin closes, then one line per answer on stdout,
 * "SENT_EPOCH_MS LATENCY_MS CONTROLLER_CPU_MS": a controller whose loop is blocked answers late
 * by that much, and (unlike one that merely waited for a core on a busy machine) spent about as
 * much CPU time meanwhile (its /proc stat, 10 ms ticks).
 */
import { readFileSync } from "node:fs";

const url = process.argv[2]!;
const pid = Number(process.argv[3]);
const cpuMs = () => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
};
const samples: string[] = [];
let asking = true;
void (async () => {
  for await (const _ of Bun.stdin.stream()) {
    // read until closed
  }
  asking = false;
})();
while (asking) {
  const sent = Date.now();
  const cpu0 = cpuMs();
  const t0 = performance.now();
  await (await fetch(`${url}/v1/health`)).arrayBuffer();
  samples.push(`${sent} ${(performance.now() - t0).toFixed(2)} ${cpuMs() - cpu0}`);
  await Bun.sleep(5);
}
process.stdout.write(samples.join("\n") + "\n");
