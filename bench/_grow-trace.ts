/**
 * Where a 4 -> 8 grow's time goes (issue 36): the adapt bench's program, warm joining ranks
 * (`ebb exec`, --warm-ranks 1) or cold (`bun PROGRAM`), with EBB_TRACE on in every process
 * (util/trace.ts). Prints, per event, the median offset from the controller's decision over the
 * trials. Run: bun bench/_grow-trace.ts [TRIALS] [warm|cold] [notrace].
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clusterApi, collectStdout, resizeAndWait, startBenchCluster } from "./cluster.ts";
import { median } from "./lib.ts";

const PROGRAM = new URL("programs/adapt.ts", import.meta.url).pathname;
const trials = Number(process.argv[2] ?? 5);
const kind = process.argv[3] ?? "warm";
const trace = `/tmp/ebb-grow-trace-${process.pid}`;
// "notrace": the totals only, nothing appended (to compare with a tree without the marks).
if (process.argv[4] !== "notrace") process.env.EBB_TRACE = trace;
writeFileSync(trace, "");
const cluster = await startBenchCluster(8, { cpusPerNode: 1, warmRanks: 1 });
const api = clusterApi(cluster);
const stop = join(cluster.dir, "stop");
const offsets = new Map<string, number[]>();
const totals: number[] = [];
try {
  for (let t = 0; t < trials; t++) {
    rmSync(stop, { force: true });
    const argv = kind === "warm" ? ["ebb", "exec", PROGRAM, stop] : [process.execPath, PROGRAM, stop];
    const run = Bun.spawn([...cluster.ebb, "run", "-N", "4", "--elastic", "--min-nodes", "1", "--max-nodes", "8", "--", ...argv], { env: cluster.env, stdout: "pipe", stderr: "inherit" });
    const stdout = collectStdout(run.stdout);
    while (!/ready rank=3/.test(stdout.text())) await Bun.sleep(20);
    await Bun.sleep(3000);
    writeFileSync(trace, "");
    const job = (await api("GET", "/v1/jobs?state=RUNNING")).jobs[0].id as number;
    const times = await resizeAndWait(api, job, 8, 100);
    totals.push(times.committed! - times.requested!);
    const lines = readFileSync(trace, "utf8").trim().split("\n").map((l) => l.split(" "));
    if (process.env.GROW_TRACE_KEEP) writeFileSync(`${process.env.GROW_TRACE_KEEP}-${t}`, readFileSync(trace, "utf8"));
    const decided = lines.find((l) => l[2] === "ctl.decide");
    console.error(`trial ${t}: ${totals.at(-1)} ms`);
    // A tree without the marks (a baseline's) gives its totals only.
    if (decided) addOffsets(lines, Number(decided[0]));
    writeFileSync(stop, "");
    await run.exited;
    await stdout.done;
    await Bun.sleep(500);
  }
} finally {
  writeFileSync(stop, "");
  await cluster.stop();
  rmSync(trace, { force: true });
}
const rows = [...offsets].map(([k, v]) => [k, median(v)] as const).sort((a, b) => a[1] - b[1]);
console.log(`${kind}, ${trials} trials; decision to commit (controller's times) median ${median(totals)} ms: ${totals.join(", ")}`);
for (const [k, v] of rows) console.log(`${v.toFixed(1).padStart(8)} ms  ${k}`);

/** Per event: the first and the last occurrence (several ranks and agents mark the same event), from t0. */
function addOffsets(lines: string[][], t0: number): void {
  const seen = new Map<string, number[]>();
  for (const [time, , event, ...detail] of lines) {
    const key = `${event}${detail.length ? ` ${detail.join(" ").replace(/^\d+ \d+$/, (x) => x.split(" ")[0]!).replace(/^\d{4,}$/, "")}` : ""}`.trim();
    (seen.get(key) ?? seen.set(key, []).get(key)!).push(Number(time) - t0);
  }
  for (const [key, ts] of seen) {
    (offsets.get(`${key} first`) ?? offsets.set(`${key} first`, []).get(`${key} first`)!).push(Math.min(...ts));
    if (ts.length > 1) (offsets.get(`${key} last`) ?? offsets.set(`${key} last`, []).get(`${key} last`)!).push(Math.max(...ts));
  }
}
