/**
 * DRMS's RS policy (Moreira & Naik). Jobs start as under AS, at their smallest size so that as
 * many as possible start (FCFS, EASY backfilling). If a job waits and shrinking running elastic
 * jobs toward their minimum (largest surplus first) frees enough, they shrink; if nothing waits,
 * idle nodes go to running elastic jobs one at a time, oldest first, up to their maximum. The paper
 * left victim choice and targets open; these are ebb's reading.
 */
import type { PassInput, PassPlan, Reservation, Resize } from "../types.ts";
import { batch, countStarts, firstWaiting, incomingNodes, movable, queue } from "./common.ts";

export function planDrms(input: PassInput): PassPlan {
  const q = queue(input);
  const b = batch(input, q, { startSize: (job) => job.minNodes });
  const head = firstWaiting(input, q, b.starts, 1)[0];
  const resizes: Resize[] = [];
  const reservations: Reservation[] = b.reservation ? [b.reservation] : [];
  const jobs = input.running.filter((j) => movable(j, input));
  if (head) {
    let need = head.minNodes - b.free - incomingNodes(input);
    const victims = jobs.filter((j) => j.nodes > j.minNodes).sort((a, c) => c.nodes - c.minNodes - (a.nodes - a.minNodes) || a.id - c.id);
    const surplus = victims.reduce((acc, j) => acc + j.nodes - j.minNodes, 0);
    if (need > 0 && surplus >= need) {
      const from: number[] = [];
      for (const j of victims) {
        if (need <= 0) break;
        const give = Math.min(need, j.nodes - j.minNodes);
        need -= give;
        from.push(j.id);
        resizes.push({ jobId: j.id, from: j.nodes, to: j.nodes - give, rule: "admit", reason: `job ${head.id} waits: give ${give} node(s) (minimum ${j.minNodes})` });
      }
      const r: Reservation = { jobId: head.id, start: input.now, nodes: head.minNodes, fromJobs: from, reason: `drms-rs: running jobs shrink for it` };
      reservations.splice(0, reservations.length, r);
    }
  } else if (b.free > 0) {
    const growable = jobs.filter((j) => j.nodes < j.maxNodes).sort((a, c) => a.submitTime - c.submitTime || a.id - c.id);
    const add = new Map<number, number>();
    let idle = b.free;
    let progress = true;
    while (idle > 0 && progress) {
      progress = false;
      for (const j of growable) {
        if (idle === 0) break;
        const cur = j.nodes + (add.get(j.id) ?? 0);
        if (cur >= j.maxNodes) continue;
        add.set(j.id, (add.get(j.id) ?? 0) + 1);
        idle--;
        progress = true;
      }
    }
    for (const j of growable) {
      const a = add.get(j.id);
      if (a) resizes.push({ jobId: j.id, from: j.nodes, to: j.nodes + a, rule: "grow", reason: `nothing waits: ${a} of ${b.free} idle node(s)` });
    }
  }
  return { starts: countStarts(b), resizes, reservations, notes: [] };
}
