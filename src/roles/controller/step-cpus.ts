/**
 * The CPUs of a job that its exact steps (srun --exact / --exclusive) hold, and the exact steps
 * that wait for them, per job in the order they came. A hold is released at the step's end, when
 * the launcher connection that created it closes, and when the job ends; each release grants the
 * waiting steps that fit now, in order (sched/step-place.ts chooses where). Memory only: a
 * restarted controller knows no holds.
 */
import type { StepGrant } from "../../proto/requests.ts";
import type { LauncherSession } from "./state.ts";

interface Hold {
  stepId: number;
  /** The connection that created the step; none over HTTP. */
  owner?: LauncherSession;
  /** Cores (the node's indices) held on each node. */
  cores: Map<string, readonly number[]>;
}

/** A step waiting for CPUs: `tryGrant` grants it if it fits now (undefined if not), and may throw (the store takes no writes). */
export interface StepWaiter {
  owner: LauncherSession;
  tryGrant(): StepGrant | undefined;
  resolve(grant: StepGrant): void;
  reject(e: unknown): void;
}

interface JobSteps {
  holds: Map<number, Hold>;
  waiting: StepWaiter[];
}

/** Steps a launcher connection may have waiting at once (ebb run asks for one). */
export const WAITING_PER_CONNECTION = 1;

export class StepCpus {
  private readonly jobs = new Map<number, JobSteps>();

  private of(jobId: number): JobSteps {
    let j = this.jobs.get(jobId);
    if (!j) this.jobs.set(jobId, (j = { holds: new Map(), waiting: [] }));
    return j;
  }

  /** The cores (the node's indices) job `jobId`'s exact steps hold on `node`. */
  heldCores(jobId: number, node: string): Set<number> {
    const out = new Set<number>();
    for (const h of this.jobs.get(jobId)?.holds.values() ?? []) for (const c of h.cores.get(node) ?? []) out.add(c);
    return out;
  }

  /** How many CPUs job `jobId`'s exact steps hold on `node`. */
  held(jobId: number, node: string): number {
    return this.heldCores(jobId, node).size;
  }

  /** Exact steps of the job running (holding CPUs) and waiting. */
  counts(jobId: number): { running: number; waiting: number } {
    const j = this.jobs.get(jobId);
    return { running: j?.holds.size ?? 0, waiting: j?.waiting.length ?? 0 };
  }

  hold(jobId: number, stepId: number, owner: LauncherSession | undefined, nodes: readonly string[], cores: readonly (readonly number[])[]): void {
    this.of(jobId).holds.set(stepId, { stepId, owner, cores: new Map(nodes.map((n, i) => [n, cores[i]!])) });
  }

  /** Queue a step behind the job's other waiting ones; false when its connection has its share waiting already. */
  wait(jobId: number, w: StepWaiter): boolean {
    let mine = 0;
    for (const j of this.jobs.values()) for (const o of j.waiting) if (o.owner === w.owner) mine++;
    if (mine >= WAITING_PER_CONNECTION) return false;
    this.of(jobId).waiting.push(w);
    return true;
  }

  /** Step `stepId` ended: its CPUs go to the waiting steps that fit now. */
  release(jobId: number, stepId: number): void {
    const j = this.jobs.get(jobId);
    if (!j?.holds.delete(stepId)) return;
    this.grantWaiting(jobId);
  }

  /** A launcher connection closed: the holds of the steps it created and its waiting steps go. */
  closed(owner: LauncherSession): void {
    for (const [jobId, j] of [...this.jobs]) {
      const before = j.holds.size;
      for (const [id, h] of j.holds) if (h.owner === owner) j.holds.delete(id);
      j.waiting = j.waiting.filter((w) => w.owner !== owner);
      if (j.holds.size < before) this.grantWaiting(jobId);
      else this.forgetIfIdle(jobId);
    }
  }

  /**
   * The job ended (or went back to the queue): its holds go, its waiting steps fail with what `why`
   * makes (made only for a step that waits: an Error's stack cost every job's end ~10 µs).
   */
  jobEnded(jobId: number, why: () => unknown): void {
    const j = this.jobs.get(jobId);
    this.jobs.delete(jobId);
    if (!j?.waiting.length) return;
    const e = why();
    for (const w of j.waiting) w.reject(e);
  }

  private grantWaiting(jobId: number): void {
    const j = this.jobs.get(jobId);
    if (!j) return;
    for (const w of [...j.waiting]) {
      let grant: StepGrant | undefined;
      try {
        grant = w.tryGrant();
      } catch (e) {
        j.waiting = j.waiting.filter((o) => o !== w);
        w.reject(e);
        continue;
      }
      if (!grant) continue;
      j.waiting = j.waiting.filter((o) => o !== w);
      w.resolve(grant);
    }
    this.forgetIfIdle(jobId);
  }

  private forgetIfIdle(jobId: number): void {
    const j = this.jobs.get(jobId);
    if (j && j.holds.size === 0 && j.waiting.length === 0) this.jobs.delete(jobId);
  }
}
