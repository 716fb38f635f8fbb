import { describe, expect, test } from "bun:test";
import { Detector } from "../../src/cfg/detector.ts";
import { currentMtct, mergeCfg, observeCfg, variance } from "../../src/cfg/merge.ts";
import { rankRange, reduceNode, signature, type RankCfg } from "../../src/cfg/node.ts";
import { OpType } from "../../src/cfg/types.ts";
import { SubtreeCfg } from "../../src/cfg/subtree.ts";
import { mulberry32 } from "../../src/sim/random.ts";

const P = OpType.P2p;
const C = OpType.Collective;

/** Fig. 10.3: four ranks; 6 and 3 point-to-point, 1 a collective, all in loop 6…1; 2 and 0 outside;
 *  only rank 0 runs the nested loop 9…7 (two collectives) and re-enters loop 6 at 3. */
function fig103(): RankCfg[] {
  const type = (id: number) => (id === 6 || id === 3 ? P : C);
  const ranks: RankCfg[] = [];
  for (let rank = 0; rank < 4; rank++) {
    const d = new Detector({ interval: 0 });
    const seq = rank === 0
      ? [2, 0, 6, 3, 1, 6, 3, 1, 6, 3, 1, 9, 7, 9, 7, 3, 1, 6, 3, 1, 6, 3, 1, 9, 7, 9, 7]
      : [2, 0, 6, 3, 1, 6, 3, 1, 6, 3, 1, 6, 3, 1, 6, 3, 1];
    // Odd ranks receive first: their p2p calls come in the other order (the parity branch).
    const ids = rank % 2 ? seq.map((x) => (x === 6 ? 3 : x === 3 ? 6 : x)) : seq;
    ids.forEach((id, i) => d.step(id, type(id), i * 100, i * 100 + 10 * (type(id) === C ? 3 : 1)));
    ranks.push({ rank, rows: d.table() });
  }
  return ranks;
}

describe("node-local reduction (§10.2.2, Fig. 10.3 -> 10.4)", () => {
  test("four ranks share loop 6…1; only rank 0 has the nested loop 9…7", () => {
    const node = reduceNode(fig103());
    const summary = node.loops.map((l) => [l.key, rankRange(l.ranks), l.parent]);
    expect(summary).toEqual([
      ["collective@1 p2p", "0-3", null],
      ["collective@7 collective@9", "0", "collective@1 p2p"],
    ]);
    const outer = node.loops[0]!;
    // Nodes outside loops (2, 0) are gone; 6 and 3 are one p2p block.
    expect(outer.key.includes("@2") || outer.key.includes("@0")).toBe(false);
    // Revisits: rank 0 visits head 6 five times, ranks 1-3 five times -> mode 5.
    expect(outer.visits).toBe(5);
    expect(outer.visitCounts).toEqual([[5, 4]]);
    // Complete iterations since each rank's detection (head visits 2 -> 5): 3 per rank.
    expect(outer.iterations).toBe(12);
    expect(outer.reentries).toBe(1);
    // TLT and TMT are summed over ranks.
    const one = reduceNode([fig103()[1]!]).loops[0]!;
    expect(outer.loopTime).toBeGreaterThan(3 * one.loopTime);
    expect(node.loops[1]!.ranks).toEqual([0]);
  });

  test("site ids up to 2^53 (object + offset) and many colliding low bits reduce the same as small ids", () => {
    const big = (id: number) => 2 ** 52 + id * 2 ** 32; // same low 32 bits for every site
    const remap = (cfgs: RankCfg[]) =>
      cfgs.map((c) => ({
        ...c,
        rows: c.rows.map((r) => ({ ...r, site: big(r.site), tail: r.tail === null ? null : big(r.tail), headOf: r.headOf === null ? null : big(r.headOf), reentrySource: r.reentrySource === null ? null : big(r.reentrySource) })),
      }));
    const small = reduceNode(fig103());
    const large = reduceNode(remap(fig103()));
    const shape = (n: typeof small, f: (k: string) => string) => n.loops.map((l) => [f(l.key), rankRange(l.ranks), l.parent === null ? null : f(l.parent), l.visits, l.iterations, l.reentries]);
    const unmap = (k: string) => k.replace(/@(\d+)/g, (_, x) => `@${(Number(x) - 2 ** 52) / 2 ** 32}`);
    expect(shape(large, unmap).sort()).toEqual(shape(small, (k) => k).sort());
  });

  test("signatures: p2p runs collapse circularly, rotations match", () => {
    expect(signature(["p2p", "p2p", "collective@1"])).toBe("collective@1 p2p");
    expect(signature(["collective@1", "p2p", "p2p"])).toBe("collective@1 p2p");
    expect(signature(["p2p", "collective@1", "p2p"])).toBe("collective@1 p2p");
    expect(signature(["p2p", "p2p"])).toBe("p2p");
    expect(signature(["collective@2", "collective@1"])).toBe("collective@1 collective@2");
  });

  test("signatures: the least rotation equals a brute-force search (seeded random loops)", () => {
    const r = mulberry32(7);
    for (let c = 0; c < 2000; c++) {
      const n = 1 + Math.floor(r.next() * 9);
      const toks = Array.from({ length: n }, () => ["collective@1", "io@2", "p2p", "collective@3"][Math.floor(r.next() * 4)]!);
      let t = toks.filter((x, i) => !(x === "p2p" && toks[(i + n - 1) % n] === "p2p"));
      if (t.length === 0) t = ["p2p"];
      let best = t.join(" ");
      for (let i = 1; i < t.length; i++) {
        const s = [...t.slice(i), ...t.slice(0, i)].join(" ");
        if (s < best) best = s;
      }
      expect(signature(toks)).toBe(best);
    }
  });

  test("rank ranges", () => {
    expect(rankRange([0, 1, 2, 3, 5, 7, 8])).toBe("0-3,5,7-8");
    expect(rankRange([])).toBe("");
  });
});

describe("distributed merge (§10.2.3)", () => {
  test("two nodes: rank sets united, times summed, distributed loop = present at every rank", () => {
    const a = fig103();
    const b = fig103().map((r) => ({ ...r, rank: r.rank + 4 }));
    const merged = mergeCfg([reduceNode(a), reduceNode(b)]);
    expect(merged.loops.map((l) => [l.key, rankRange(l.ranks)])).toEqual([
      ["collective@1 p2p", "0-7"],
      ["collective@7 collective@9", "0,4"],
    ]);
    const job = observeCfg(undefined, merged, 8);
    expect(job.loops.map((l) => l.distributed)).toEqual([true, false]);
    expect(job.current).toBe("collective@1 p2p");
    // Associative: merging in another grouping gives the same.
    const again = mergeCfg([mergeCfg([reduceNode(a)]), mergeCfg([reduceNode(b)])]);
    expect(again).toEqual(merged);
    expect(mergeCfg([reduceNode([...a, ...b])])).toEqual(merged);
  });

  test("per-loop series over observations: mean, variance, min, max, recent; MTCT of the current distributed loop", () => {
    // One rank, loop of a compute part c and an MPI part m per iteration; phases change c.
    const d = new Detector({ interval: 0 });
    let t = 0;
    const iterate = (n: number, c: number, m: number) => {
      for (let i = 0; i < n; i++) {
        d.step(1, C, t, t + m);
        t += m + c;
      }
    };
    iterate(10, 300, 100);
    let job = observeCfg(undefined, reduceNode([{ rank: 0, rows: d.table() }]), 1);
    iterate(10, 300, 100);
    job = observeCfg(job, reduceNode([{ rank: 0, rows: d.table() }]), 1);
    expect(currentMtct(job)).toBeCloseTo(100 / 300, 9);
    iterate(10, 100, 100);
    job = observeCfg(job, reduceNode([{ rank: 0, rows: d.table() }]), 1);
    // The newest window, not the blend: head visit to head visit, so it spans the last old
    // iteration (400) and nine new ones (200): MPI 1000, compute 2200 - 1000.
    expect(currentMtct(job)).toBeCloseTo(1000 / 1200, 9);
    const l = job.loops[0]!;
    expect(l.iter.n).toBe(3);
    expect(l.iter.min).toBeCloseTo(2200 / 10, 9);
    expect(l.iter.max).toBeCloseTo(400, 9);
    expect(l.iter.recent.length).toBe(3);
    // Every window, the first (detection to the last head visit) included, is exact: 100 per iteration.
    expect(l.mpi.recent).toEqual([100, 100, 100]);
    expect(variance(l.mpi)).toBeCloseTo(0, 9);
    expect(variance(l.iter)).toBeGreaterThan(0);
    // No distributed loop (1 of 2 ranks): no MTCT.
    expect(currentMtct(observeCfg(undefined, reduceNode([{ rank: 0, rows: d.table() }]), 2))).toBeUndefined();
  });
});

describe("one level of the distributed reduction (SubtreeCfg)", () => {
  const node = (ranks: number[]) => reduceNode(fig103().filter((r) => ranks.includes(r.rank)));
  test("own CFG and children's subtrees merge; final only when all are final or lost; fewest reports", () => {
    const t = new SubtreeCfg([1, 2]);
    expect(t.merged()).toBeUndefined();
    t.local(node([0]), false);
    expect(t.merged()!.reports).toBe(0); // children silent so far
    t.child(1, { cfg: node([1]), final: false, reports: 3 });
    t.child(2, { cfg: node([2, 3]), final: true, reports: 2 });
    t.child(7, { cfg: node([3]), final: true, reports: 9 }); // not a child: ignored
    let m = t.merged()!;
    expect(m.final).toBe(false);
    expect(m.reports).toBe(1);
    expect(m.cfg).toEqual(mergeCfg([node([0]), node([1]), node([2, 3])]));
    expect(m.cfg.loops.map((l) => rankRange(l.ranks))).toEqual(["0-3", "0"]);
    expect(t.dirty).toBe(false);
    t.local(node([0]), true);
    expect(t.complete).toBe(false);
    t.childLost(1);
    expect(t.complete).toBe(true);
    m = t.merged()!;
    expect(m.final).toBe(true);
    // A lost child's last report stays in.
    expect(m.cfg.loops[0]!.ranks).toEqual([0, 1, 2, 3]);
    // The launcher's level has no ranks of its own.
    const root = new SubtreeCfg([0], false);
    root.child(0, m);
    expect(root.complete).toBe(true);
    expect(root.merged()!.cfg).toEqual(m.cfg);
  });
});
