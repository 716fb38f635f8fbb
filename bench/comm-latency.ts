/**
 * Paired latency rounds: the 8 B ping-pong of several sides (ebb/comm builds, MPICH, the JS floor)
 * run back to back in each round, many short rounds, the order reversed every other round
 * (ABC CBA ABC ...). A side's figure against another is the median over the rounds of their ratio
 * in the same round, with its quartiles: a machine that changes speed between rounds (this one's
 * MPICH swung 0.18-1.1 µs one way from round to round) moves both sides of a pair, not the ratio.
 * Every side runs a program printing what programs/pingpong-rtt.ts prints.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { runCommand } from "./cluster.ts";
import { median, percentile } from "./lib.ts";

export interface Side {
  name: string;
  argv: string[];
  env?: Record<string, string>;
}

/** One run of a side (ns unless said; NaN where the side does not measure it). */
export interface Rtt {
  p10: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  /** Round trips over 20 µs, of 20,000. */
  slow: number;
  /** Round trips of 1 ms or more (the `hist` line; NaN without one): mostly preemptions by other work. */
  stalls: number;
  /** The mean of the round trips under 1 ms: the mean without those stalls, which come at a rate per second of wall time. */
  meanBelow1ms: number;
  /** Both ranks' CPU time per round trip. */
  cpu: number;
  /** The median round trip ending a 5 ms wait, µs. */
  waitRtt: number;
  /** CPU seconds per second rank 1 burns while it waits 5 ms in a receive. */
  waitCpu: number;
}

export function parseRtt(out: string): Rtt {
  const m = /^rtt p10=(\d+) p50=(\d+) p90=(\d+) p99=(\d+) mean=(\d+)/m.exec(out);
  if (!m) throw new Error(`no round trips in the output:\n${out.slice(-2000)}`);
  const [p10, p50, p90, p99, mean] = m.slice(1).map(Number) as [number, number, number, number, number];
  const cpu = [...out.matchAll(/^cpu rank=\d+ ns_per_rtt=(\d+)/gm)].reduce((a, x) => a + Number(x[1]), 0);
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? Number.NaN);
  // hist: buckets "<Xus:count/share" (share: the bucket's sum / all round trips, ns) and ">=1ms:count/share".
  const buckets = [...(/^hist (.*)$/m.exec(out)?.[1] ?? "").matchAll(/(<[\d.]+us|>=1ms):(\d+)\/(\d+)/g)].map((b) => ({ long: b[1] === ">=1ms", n: Number(b[2]), share: Number(b[3]) }));
  const all = buckets.reduce((a, b) => a + b.n, 0);
  const short = buckets.filter((b) => !b.long);
  const stalls = buckets.length ? all - short.reduce((a, b) => a + b.n, 0) : Number.NaN;
  const meanBelow1ms = buckets.length ? (short.reduce((a, b) => a + b.share, 0) * all) / (all - stalls) : Number.NaN;
  return { p10, p50, p90, p99, mean, stalls, meanBelow1ms, slow: num(/^slow>20us n=(\d+)/m), cpu: cpu || Number.NaN, waitRtt: num(/^wait ms=\d+ rtt_us=([\d.]+)/m), waitCpu: num(/^cpu wait ms=\d+ rank=1 pct=([\d.]+)/m) / 100 };
}

export interface Rounds {
  sides: Side[];
  /** runs[side][round] */
  runs: Rtt[][];
  /** The 1-minute load average before each round. */
  loads: number[];
}

const loadAvg = async () => Number((await Bun.file("/proc/loadavg").text()).split(" ")[0]);

/** `rounds` rounds of every side back to back, the order reversed every other round. */
export async function pairedRounds(sides: Side[], rounds: number, env: Record<string, string>, log = (line: string) => process.stderr.write(`${line}\n`)): Promise<Rounds> {
  const runs = sides.map(() => [] as Rtt[]);
  const loads: number[] = [];
  for (let r = 0; r < rounds; r++) {
    loads.push(await loadAvg());
    const order = sides.map((_, i) => i);
    if (r % 2) order.reverse();
    for (const i of order) runs[i]!.push(parseRtt((await runCommand(sides[i]!.argv, { ...env, ...sides[i]!.env })).out));
    const show = (x: Rtt) => `p50 ${x.p50} mean ${x.mean} cpu ${x.cpu}`;
    log(`  round ${r + 1} (load ${loads[r]}): ${sides.map((s, i) => `${s.name} ${show(runs[i]![r]!)}`).join(", ")}`);
  }
  return { sides, runs, loads };
}

export interface Paired {
  median: number;
  /** The quartiles of the per-round ratios. */
  lo: number;
  hi: number;
}

/** The per-round ratio of side `a` to side `b` in measure `k` (over the rounds `keep` keeps): its median and quartiles. */
export function paired(res: Rounds, a: number, b: number, k: keyof Rtt, keep = (_round: number) => true): Paired & { rounds: number } {
  const ratios = res.runs[a]!.map((x, r) => x[k] / res.runs[b]![r]![k]).filter((_, r) => keep(r));
  return { median: median(ratios), lo: percentile(ratios, 25), hi: percentile(ratios, 75), rounds: ratios.length };
}

/**
 * The rounds in which side `s` ran at its fastest: its median round trip within 1.5x of its best
 * round's. Two processes on this machine's two vCPUs ping-pong in two modes (MPICH ~360 ns a round
 * trip, or ~1,400), and the mode can change between two runs a second apart; a median over rounds
 * of both modes is no figure of either.
 */
export function fastRounds(res: Rounds, s: number): (round: number) => boolean {
  const best = Math.min(...res.runs[s]!.map((x) => x.p50));
  return (r) => res.runs[s]![r]!.p50 <= 1.5 * best;
}

/** A side's median of measure `k` over the rounds. */
export function med(res: Rounds, side: number, k: keyof Rtt): number {
  return median(res.runs[side]!.map((x) => x[k]));
}

export const spread = (p: Paired) => `quartiles ${p.lo.toFixed(2)}-${p.hi.toFixed(2)}`;

/**
 * The 8 B ping-pong (programs/pingpong-rtt.ts) copied into the tree `dir` (a directory with src/,
 * e.g. `git archive REV src | tar -x -C DIR`), so that it imports that tree's ebb/comm; its path there.
 */
export function pingPongIn(dir: string): string {
  const program = new URL("programs/pingpong-rtt.ts", import.meta.url).pathname;
  const there = `${dir}/bench/programs/pingpong-rtt.ts`;
  mkdirSync(`${dir}/bench/programs`, { recursive: true });
  if (there !== program) copyFileSync(program, there);
  return there;
}
