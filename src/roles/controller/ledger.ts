/**
 * The one writer of the controller's job state and allocations (ARCHITECTURE.md: "one owner").
 *
 * A change is a transaction of typed events. `commit(fn)` runs `fn` in one SQLite transaction;
 * each event `fn` records through the `LedgerTx` it gets writes its rows there, and the caller
 * writes what goes with it (the job's event log, steps, adaptation records) in the same
 * transaction. Once it has committed, and only then, `reduce` applies the events to memory, in
 * order: jobs' rows, allocations and their shares on both sides (a job's `shares`, aligned with its
 * `nodes`; a node's `shares`, by job). Nothing else changes them.
 *
 * A restarted controller rebuilds memory with the same reducer (`restore`): the active jobs are
 * `submitted` again as the store holds them, and their open allocations `allocated` in order,
 * each with the share its row records (a row from before shares: the whole node).
 */
import { ACTIVE_STATES, type FinalState } from "../../domain/job.ts";
import type { NodeShare } from "../../domain/resources.ts";
import { StoreUnavailable } from "../../store/db.ts";
import { shareOf, type JobRow, type JobStore, type JobUsage, type NewJob } from "../../store/jobs.ts";
import type { ClusterState, JobRuntime } from "./state.ts";

export type LedgerEvent =
  | { t: "submitted"; rows: readonly JobRow[] }
  | { t: "held"; jobIds: readonly number[]; held: boolean }
  | { t: "started"; jobId: number; shares: readonly NodeShare[]; at: number; nextStep: number; output: string | null; error: string | null; timeLimit: number }
  | { t: "allocated"; jobId: number; shares: readonly NodeShare[] }
  | { t: "released"; jobId: number; nodes: readonly string[] }
  | { t: "state"; jobId: number; state: "RUNNING" | "ADAPTING" }
  | { t: "limit"; jobId: number; timeLimit: number }
  | { t: "updated"; jobId: number; fields: JobFields }
  | { t: "steps"; jobId: number; nextStep: number }
  | { t: "program"; jobId: number; program: Record<string, unknown> | null }
  | { t: "ended"; jobId: number; state: FinalState; at: number; exitCode: number | null; reason: string | null }
  | { t: "usage"; jobId: number; usage: JobUsage }
  | { t: "outOfMemory"; jobId: number; reason: string }
  | { t: "requeued"; jobId: number };

/** What scontrol update changes of a job beside its time limit (PATCH /v1/jobs/:id). */
export type JobFields = Partial<Pick<JobRow, "name" | "dependency" | "nodes" | "minNodes" | "maxNodes" | "resources" | "partition">>;

/** What a job used on one node so far, as its agent reported it (job.usage). */
export interface NodeUsageReport {
  node: string;
  cpuSec: number;
  peakMemMiB: number;
}

type Submission = Omit<NewJob, "id" | "state" | "output" | "arrayJobId" | "arrayTaskId" | "usage"> & { output?: string | null };

/** What a transaction records: each method writes its rows now and its event is reduced after the commit. */
export interface LedgerTx {
  /** New jobs (one, or the tasks of an array): their rows, with the ids the store gave them. */
  submitted(values: Submission, indices?: readonly number[], spec?: string, step?: number): JobRow[];
  held(jobs: readonly JobRuntime[], held: boolean): void;
  /** The job runs on its shares' nodes, in that (rank) order. */
  started(job: JobRuntime, shares: readonly NodeShare[], at: number, f: { nextStep: number; output: string | null; error: string | null; timeLimit: number }): void;
  /** Nodes added to a running job's allocation, after the ones it holds, with its share of each. */
  allocated(job: JobRuntime, shares: readonly NodeShare[], at: number): void;
  /** Nodes a running job gives back. */
  released(job: JobRuntime, nodes: readonly string[], at: number): void;
  state(job: JobRuntime, state: "RUNNING" | "ADAPTING"): void;
  /** The job's time limit from now on (the store's record of the change, with its reason, is the caller's). */
  limit(job: JobRuntime, timeLimit: number): void;
  /** The job's name or dependency from now on (scontrol update). */
  updated(job: JobRuntime, fields: JobFields): void;
  steps(job: JobRuntime, nextStep: number): void;
  /** An EPOP program's last report (null: none), kept so a restarted controller knows where it was. */
  program(job: JobRuntime, program: Record<string, unknown> | null): void;
  /**
   * `step0Only`: its one step, step 0, is finished by the caller in this transaction (no other is
   * left to close). `used`: a node's usage report recorded first, as `usage` would (a one-node
   * job's is written with the end: one UPDATE of its row and one of its allocation's).
   */
  ended(job: JobRuntime, state: FinalState, at: number, exitCode: number | null, reason: string | null, step0Only?: boolean, used?: NodeUsageReport): void;
  /** A running job back in the queue (--requeue after a node failed): its nodes and steps are let go, it waits to start again. */
  requeued(job: JobRuntime, at: number): void;
  /** What a job (active or ended) used, as recorded from now on (the caller has summed the reports). */
  usage(jobId: number, usage: JobUsage): void;
  /**
   * A job that ended FAILED went over its memory: the report of the OOM kill came after its exit
   * (its first node's script died of it). It is OUT_OF_MEMORY, with the reason; nothing else changes.
   */
  outOfMemory(jobId: number, reason: string): void;
}

const newRuntime = (row: JobRow): JobRuntime => ({ row, nodes: [], shares: [], launchers: new Set(), spawnedSteps: new Map() });

type AllocationEvent = Extract<LedgerEvent, { t: "started" | "allocated" | "released" }>;

/** A job's shares, in rank order, after an event that changes its allocation. */
function allocationAfter(shares: readonly NodeShare[], e: AllocationEvent): NodeShare[] {
  if (e.t === "started") return [...e.shares];
  if (e.t === "allocated") return [...shares, ...e.shares];
  return shares.filter((s) => !e.nodes.includes(s.node));
}

/** Applies one committed event to memory: the only code that changes jobs' rows, allocations and node ownership. */
export function reduce(state: ClusterState, e: LedgerEvent): void {
  if (e.t === "submitted") {
    for (const row of e.rows) {
      const job = newRuntime(row);
      state.jobs.set(row.id, job);
      if (row.state === "PENDING") state.waits(job);
      else state.starts(job);
    }
    return;
  }
  if (e.t === "held") {
    for (const id of e.jobIds) {
      const job = state.jobs.get(id);
      if (job) job.row.held = e.held;
    }
    return;
  }
  const job = state.jobs.get(e.jobId);
  if (!job) return;
  const row = job.row;
  const own = (shares: readonly NodeShare[]) => {
    for (const s of shares) state.nodes.get(s.node)?.shares.set(row.id, s);
  };
  const disown = (nodes: readonly string[]) => {
    for (const n of nodes) state.nodes.get(n)?.shares.delete(row.id);
  };
  const allocate = (e: AllocationEvent) => {
    job.shares = allocationAfter(job.shares, e);
    job.nodes = job.shares.map((s) => s.node);
    row.nodes = job.nodes.length;
  };
  switch (e.t) {
    case "started":
      Object.assign(row, { state: "RUNNING", startTime: e.at, reason: null, nextStep: e.nextStep, output: e.output, error: e.error, timeLimit: e.timeLimit });
      job.waitReason = undefined;
      allocate(e);
      own(e.shares);
      state.starts(job);
      return;
    case "allocated":
      allocate(e);
      own(e.shares);
      return;
    case "released":
      allocate(e);
      disown(e.nodes);
      return;
    case "usage":
      row.usage = e.usage;
      return;
    case "outOfMemory":
      // Only ended jobs, which memory does not hold.
      return;
    case "state":
      row.state = e.state;
      return;
    case "limit":
      row.timeLimit = e.timeLimit;
      return;
    case "updated":
      Object.assign(row, e.fields);
      return;
    case "steps":
      row.nextStep = e.nextStep;
      return;
    case "program":
      row.program = e.program;
      return;
    case "ended":
      Object.assign(row, { state: e.state, endTime: e.at, exitCode: e.exitCode, reason: e.reason });
      disown(job.nodes);
      state.jobs.delete(row.id);
      state.leaves(job);
      return;
    case "requeued":
      Object.assign(row, { state: "PENDING", startTime: null, reason: null, restarts: row.restarts + 1 });
      disown(job.nodes);
      Object.assign(job, { nodes: [], shares: [], elastic: undefined, program: undefined, signalled: undefined, spawnedSteps: new Map() });
      state.waits(job, true);
      return;
  }
}

export class Ledger {
  constructor(
    private readonly store: JobStore,
    private readonly state: ClusterState,
  ) {}

  /** Runs `fn` in one transaction; its events reach memory once it has committed (none if it throws). */
  commit<T>(fn: (tx: LedgerTx) => T): T {
    const events: LedgerEvent[] = [];
    const result = this.store.tx(() => fn(this.recorder(events)));
    for (const e of events) reduce(this.state, e);
    return result;
  }

  /**
   * Several changes in one transaction, each in a savepoint of its own: one that throws is undone
   * alone and gets its error back; the others' events reach memory, in order, once the whole has
   * committed. A storage failure (StoreUnavailable) fails them all: it is thrown, nothing is applied.
   */
  commitEach<T>(changes: readonly ((tx: LedgerTx) => T)[]): ({ ok: true; value: T } | { ok: false; error: unknown })[] {
    // One change alone is its transaction: undone alone without a savepoint (two statements fewer).
    if (changes.length === 1) {
      try {
        return [{ ok: true, value: this.commit(changes[0]!) }];
      } catch (error) {
        if (error instanceof StoreUnavailable) throw error;
        return [{ ok: false, error }];
      }
    }
    const events: LedgerEvent[] = [];
    const results = this.store.tx(() =>
      changes.map((fn) => {
        const own: LedgerEvent[] = [];
        try {
          const value = this.store.savepoint(() => fn(this.recorder(own)));
          events.push(...own);
          return { ok: true as const, value };
        } catch (error) {
          if (error instanceof StoreUnavailable) throw error;
          return { ok: false as const, error };
        }
      }),
    );
    for (const e of events) reduce(this.state, e);
    return results;
  }

  /** Memory after a (re)start, from what the store holds: the same reducer as every change. */
  restore(): JobRuntime[] {
    const rows = this.store.activeJobs(ACTIVE_STATES);
    reduce(this.state, { t: "submitted", rows });
    for (const a of this.store.openAllocations()) reduce(this.state, { t: "allocated", jobId: a.jobId, shares: [shareOf(a) ?? this.state.wholeShare(a.node)] });
    return rows.map((r) => this.state.jobs.get(r.id)!);
  }

  private recorder(events: LedgerEvent[]): LedgerTx {
    const s = this.store;
    const tx: LedgerTx = {
      submitted: (values, indices, spec, step) => {
        const ids = indices ? s.insertArray(values, indices, spec ?? "", step) : [s.insertJob(values)];
        const arrayJobId = indices ? ids[0]! : null;
        // Every task's row shares the array's values (by reference, as the store keeps them once).
        const rows = ids.map((id, i): JobRow => ({ ...(values as JobRow), output: values.output ?? null, id, arrayJobId, arrayTaskId: indices?.[i] ?? null, state: "PENDING", startTime: null, endTime: null, exitCode: null, reason: null, nextStep: 0, resources: values.resources ?? null, usage: null, partition: values.partition ?? null }));
        events.push({ t: "submitted", rows });
        return rows;
      },
      held: (jobs, held) => {
        const jobIds = jobs.map((j) => j.row.id);
        s.setHeld(jobIds, held);
        events.push({ t: "held", jobIds, held });
      },
      started: (job, shares, at, f) => {
        s.markRunning(job.row.id, at, shares.length, f.nextStep, f.output, f.error);
        if (f.timeLimit !== job.row.timeLimit) s.setTimeLimit(job.row.id, f.timeLimit);
        // A job never requeued never held nodes before: its first allocation rows.
        s.openAllocation(job.row.id, shares, at, 0, job.row.restarts === 0);
        events.push({ t: "started", jobId: job.row.id, shares: [...shares], at, ...f });
      },
      allocated: (job, shares, at) => {
        const e: AllocationEvent = { t: "allocated", jobId: job.row.id, shares: [...shares] };
        const held = this.holdsAfter(job, events);
        s.openAllocation(job.row.id, shares, at, held.length);
        s.setNodes(job.row.id, allocationAfter(held, e).length);
        events.push(e);
      },
      released: (job, nodes, at) => {
        const e: AllocationEvent = { t: "released", jobId: job.row.id, nodes: [...nodes] };
        s.closeAllocation(job.row.id, at, nodes);
        s.setNodes(job.row.id, allocationAfter(this.holdsAfter(job, events), e).length);
        events.push(e);
      },
      state: (job, state) => {
        s.setState(job.row.id, state);
        events.push({ t: "state", jobId: job.row.id, state });
      },
      limit: (job, timeLimit) => {
        s.setTimeLimit(job.row.id, timeLimit);
        events.push({ t: "limit", jobId: job.row.id, timeLimit });
      },
      updated: (job, fields) => {
        s.setFields(job.row.id, fields);
        events.push({ t: "updated", jobId: job.row.id, fields });
      },
      steps: (job, nextStep) => {
        s.setNextStep(job.row.id, nextStep);
        events.push({ t: "steps", jobId: job.row.id, nextStep });
      },
      program: (job, program) => {
        s.setProgram(job.row.id, program);
        events.push({ t: "program", jobId: job.row.id, program });
      },
      ended: (job, state, at, exitCode, reason, step0Only, used) => {
        const id = job.row.id;
        const active = job.row.state !== "PENDING";
        const folded = used && active ? s.markEndedWithUsage(id, used.node, used.cpuSec, used.peakMemMiB, state, at, exitCode, reason) : undefined;
        if (folded) events.push({ t: "usage", jobId: id, usage: folded });
        else {
          const usage = used && active && s.recordNodeUsage(id, used.node, used.cpuSec, used.peakMemMiB);
          if (usage) tx.usage(id, usage);
          s.markEnded(id, state, at, exitCode, reason);
          // A pending job holds no nodes and has no steps (an array's cancel ends 1,001 of them at once).
          if (active) s.closeAllocation(id, at);
        }
        if (active && !step0Only) s.closeSteps(id, state, at);
        events.push({ t: "ended", jobId: id, state, at, exitCode, reason });
      },
      requeued: (job, at) => {
        s.markRequeued(job.row.id);
        s.closeAllocation(job.row.id, at);
        s.closeSteps(job.row.id, "NODE_FAIL", at);
        events.push({ t: "requeued", jobId: job.row.id });
      },
      usage: (jobId, usage) => {
        s.setUsage(jobId, usage);
        events.push({ t: "usage", jobId, usage });
      },
      outOfMemory: (jobId, reason) => {
        s.markOutOfMemory(jobId, reason);
        events.push({ t: "outOfMemory", jobId, reason });
      },
    };
    return tx;
  }

  /** The shares `job` holds once the events recorded so far in this transaction apply. */
  private holdsAfter(job: JobRuntime, events: readonly LedgerEvent[]): NodeShare[] {
    let shares: readonly NodeShare[] = job.shares;
    for (const e of events) if ((e.t === "started" || e.t === "allocated" || e.t === "released") && e.jobId === job.row.id) shares = allocationAfter(shares, e);
    return [...shares];
  }
}
