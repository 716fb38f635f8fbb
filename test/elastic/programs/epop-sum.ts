/**
 * An EPOP program for the driver tests: integer arithmetic on a block-distributed vector (so any
 * number of ranks gives the same bits), an allreduce per iteration, two elastic phases.
 *
 *   start (rigid)  prints "ready"
 *   sweep (elastic) until the stop file exists (checked by rank 0, agreed by allreduce), or
 *                   exactly --iters K iterations
 *   tail  (elastic) 20 more iterations
 *   check (rigid)  gathers the vector; rank 0 prints iterations and a checksum
 *
 * Windows print on old rank 0 ("window pc=.. iteration=.. a->b") and on each joining rank
 * ("joined rank=.. pc=.. iteration=.."). `--fail PHASE:ITER:RANK` throws in that exec.
 */
import { existsSync } from "node:fs";
import { blockLayout, blockRange } from "../../../src/comm/index.ts";
import { defineProgram, runEpop } from "../../../src/epop/index.ts";

const ROWS = 1000;
const W = 4;
const M = 1_000_003;

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? undefined : args[i + 1];
}

interface Data {
  x: Float64Array;
  first: number;
  sweeps: number;
  stop: boolean;
  iters: number | undefined;
  stopFile: string | undefined;
  pause: number;
  fail: [string, number, number] | undefined;
}

async function step(d: Data, world: { allreduce(x: number, op: "sum"): Promise<number> }, it: number): Promise<void> {
  let local = 0;
  for (let i = 0; i < d.x.length; i++) local += d.x[i]!;
  const s = (await world.allreduce(local, "sum")) % M;
  const g0 = d.first * W;
  for (let i = 0; i < d.x.length; i++) d.x[i] = (d.x[i]! * 3 + g0 + i + it + s) % M;
  if (d.pause > 0) await Bun.sleep(d.pause);
}

const maybeFail = (d: Data, phase: string, it: number, rank: number) => {
  if (d.fail && d.fail[0] === phase && d.fail[1] === it && d.fail[2] === rank) throw new Error(`injected failure at ${phase}:${it}`);
};

const program = defineProgram<Data>({
  name: "epop-sum",
  init: (args, { rank, size }) => {
    const [first, last] = blockRange(ROWS, size, rank);
    const f = flag(args, "fail")?.split(":");
    const x = new Float64Array((last - first) * W);
    for (let i = 0; i < x.length; i++) x[i] = (first * W + i) % 97;
    const iters = flag(args, "iters");
    return {
      x,
      first,
      sweeps: 0,
      stop: false,
      iters: iters === undefined ? undefined : Number(iters),
      stopFile: flag(args, "stop-file"),
      pause: Number(flag(args, "sleep") ?? 0),
      fail: f ? [f[0]!, Number(f[1]), Number(f[2])] : undefined,
    };
  },
  phases: [
    { kind: "rigid", name: "start", exec: (_, { rank, size }) => void (rank === 0 && console.log(`ready size=${size}`)) },
    {
      kind: "elastic",
      name: "sweep",
      exec: async (d, { world, iteration, rank }) => {
        maybeFail(d, "sweep", iteration, rank);
        await step(d, world, iteration);
        d.sweeps = iteration + 1;
        if (d.iters !== undefined) d.stop = d.sweeps >= d.iters;
        else d.stop = (await world.allreduce(rank === 0 && existsSync(d.stopFile!) ? 1 : 0, "max")) === 1;
        if (rank === 0 && iteration % 50 === 0) console.log(`sweep ${iteration} on ${world.size}`);
      },
      adapt: async (d, w) => {
        if (w.oldRank === 0) console.log(`window pc=${w.pc} iteration=${w.iteration} ${w.oldSize}->${w.newSize}`);
        if (w.oldRank < 0) console.log(`joined rank=${w.newRank} pc=${w.pc} iteration=${w.iteration}`);
        d.x = await w.move(blockLayout(ROWS, w.oldSize, W), blockLayout(ROWS, w.newSize, W), d.x);
        if (w.newRank >= 0) d.first = blockRange(ROWS, w.newSize, w.newRank)[0];
        // The joining ranks learn what their init could not: how far the sweep got.
        const [sweeps, stop] = w.oldRank === 0 ? [d.sweeps, d.stop ? 1 : 0] : [0, 0];
        for (let j = 0; j < w.window.joining; j++) if (w.oldRank === 0) await w.window.intercomm.send(j, [sweeps, stop], 77);
        if (w.oldRank < 0) [d.sweeps, d.stop] = await w.window.intercomm.recv<[number, number]>(0, 77).then((m) => [m.data[0], m.data[1] === 1] as const);
      },
      loop: (d) => !d.stop,
    },
    {
      kind: "elastic",
      name: "tail",
      exec: async (d, { world, iteration, rank }) => {
        maybeFail(d, "tail", iteration, rank);
        await step(d, world, 100_000 + iteration);
      },
      adapt: async (d, w) => {
        d.x = await w.move(blockLayout(ROWS, w.oldSize, W), blockLayout(ROWS, w.newSize, W), d.x);
        if (w.newRank >= 0) d.first = blockRange(ROWS, w.newSize, w.newRank)[0];
      },
      loop: (_, { iteration }) => iteration < 20,
      bound: () => 20,
    },
    {
      kind: "rigid",
      name: "check",
      exec: async (d, { world, rank }) => {
        const parts = await world.gather(d.x, 0);
        if (rank !== 0) return;
        let h = 0x811c9dc5;
        for (const p of parts as Float64Array[]) {
          const b = new Uint8Array(p.buffer, p.byteOffset, p.byteLength);
          for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i]!, 0x01000193) >>> 0;
        }
        console.log(`done sweeps=${d.sweeps} ranks=${world.size} checksum=${h.toString(16)}`);
      },
    },
  ],
});

await runEpop(program);
