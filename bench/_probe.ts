/**
 * The stall bench's probe, in a process of its own (the fuzzing client's work never delays it):
 * GET /v1/health one after the other until stdin closes, then one line per answer on stdout,
 * "SENT_EPOCH_MS LATENCY_MS". A controller whose loop is blocked answers late by that much.
 */
export {};

const url = process.argv[2]!;
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
  const t0 = performance.now();
  await (await fetch(`${url}/v1/health`)).arrayBuffer();
  samples.push(`${sent} ${(performance.now() - t0).toFixed(2)}`);
  await Bun.sleep(5);
}
process.stdout.write(samples.join("\n") + "\n");
