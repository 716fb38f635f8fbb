/**
 * Rank program for bench/epop.ts. argv[2] picks the measurement:
 *
 *   driver K US   K elastic iterations of US µs of spinning + an 8-byte allreduce, under runEpop
 *   hand K US     the same iterations in a hand-written initAdapt/probeAdapt loop
 *   move MIB      MIB of Float64 rows block-distributed over 4 of the world's 8 ranks, moved to
 *                 8 and back to 4: directly (redistribute) and through rank 0 (the dissertation's
 *                 case studies: gather everything on the root, then send each new rank its part)
 *
 * Rank 0 prints `name=ms` lines.
 */
import { blockLayout, blockRange, commMover, finalizeAdapt, initAdapt, planMove, probeAdapt, redistribute, type Comm } from "../../src/comm/index.ts";
import { defineProgram, runEpop } from "../../src/epop/index.ts";

const [mode, a, b] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];

function spin(us: number): void {
  const end = Bun.nanoseconds() + us * 1000;
  while (Bun.nanoseconds() < end);
}

if (mode === "driver") {
  let t0 = 0;
  await runEpop(
    defineProgram<object>({
      name: "bench",
      init: () => ({}),
      phases: [
        {
          kind: "elastic",
          name: "spin",
          exec: async (_, { world, iteration }) => {
            if (iteration === 0) {
              await world.barrier();
              t0 = performance.now();
            }
            spin(b);
            await world.allreduce(1, "sum");
          },
          adapt: () => {},
          loop: (_, { iteration }) => iteration < a,
        },
        { kind: "rigid", name: "end", exec: (_, { rank }) => void (rank === 0 && console.log(`driver=${performance.now() - t0}`)) },
      ],
    }),
    { args: [] },
  );
} else if (mode === "hand") {
  const { world } = await initAdapt();
  await world.barrier();
  const t0 = performance.now();
  for (let i = 0; i < a; i++) {
    if ((await probeAdapt()).pending) throw new Error("no adaptation expected");
    spin(b);
    await world.allreduce(1, "sum");
  }
  const t = performance.now() - t0;
  if (world.rank === 0) console.log(`hand=${t}`);
  await finalizeAdapt();
} else if (mode === "move") {
  const { world } = await initAdapt();
  if (world.size !== 8) throw new Error("move needs 8 ranks");
  const W = 1024; // 8 KiB rows
  const rows = Math.round((a * 1024 * 1024) / (W * 8));
  const four = blockLayout(rows, 4, W);
  const eight = blockLayout(rows, 8, W);
  const fill = (n: number) => new Float64Array(n).fill(world.rank + 1);
  const timeIt = async (f: () => Promise<void>) => {
    await world.barrier();
    const t0 = performance.now();
    await f();
    await world.barrier();
    return performance.now() - t0;
  };
  /** The root funnel: old ranks send their part to rank 0, which sends each new rank its part. */
  const funnel = async (local: Float64Array, from: number, to: number): Promise<Float64Array> => {
    const me = world.rank;
    if (me === 0) {
      const all = new Float64Array(rows * W);
      all.set(local.subarray(0, blockRange(rows, from, 0)[1] * W), 0);
      for (let r = 1; r < from; r++) all.set((await world.recv<Float64Array>(r, 5)).data, blockRange(rows, from, r)[0] * W);
      await Promise.all(Array.from({ length: to - 1 }, (_, k) => { const [s, e] = blockRange(rows, to, k + 1); return world.send(k + 1, all.subarray(s * W, e * W), 6); }));
      const [s, e] = blockRange(rows, to, 0);
      return all.slice(s * W, e * W);
    }
    if (me < from) await world.send(0, local, 5);
    return me < to ? (await world.recv<Float64Array>(0, 6)).data : new Float64Array(0);
  };
  const results: Record<string, number[]> = { direct: [], funnel: [] };
  for (let rep = 0; rep < b; rep++) {
    let local: Float64Array = world.rank < 4 ? fill(four.localLength(world.rank)) : new Float64Array(0);
    results.direct!.push(
      await timeIt(async () => {
        local = (await redistribute(commMover(world, 4, 8), planMove(four, eight), local))!;
        local = (await redistribute(commMover(world, 8, 4), planMove(eight, four), local)) ?? new Float64Array(0);
      }),
    );
    local = world.rank < 4 ? fill(four.localLength(world.rank)) : new Float64Array(0);
    results.funnel!.push(
      await timeIt(async () => {
        local = await funnel(local, 4, 8);
        local = await funnel(local, 8, 4);
      }),
    );
  }
  if (world.rank === 0) for (const [k, v] of Object.entries(results)) console.log(`${k}=${v.join(",")}`);
  await finalizeAdapt();
} else throw new Error(`epop bench program: unknown mode ${mode}`);
