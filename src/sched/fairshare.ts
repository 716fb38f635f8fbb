/**
 * Fair share (Slurm's classic multifactor fair share, one level of users): each user's usage of
 * cores, memory and GPUs over time, weighted like Slurm's TRESBillingWeights and decayed with a
 * half-life, against the user's shares. The factor is 2^(-U/S): U the user's share of all decayed
 * usage, S the user's share of all shares; 1 for a user who used nothing, 0.5 for one who used
 * exactly their share, towards 0 for one far above it. Pure: every time is passed in (epoch ms).
 */
import type { NodeResources, NodeShare } from "../domain/resources.ts";

/** Billing units per second of holding one core, one GiB of memory, one GPU. */
export interface TresWeights {
  cpu: number;
  memGiB: number;
  gpu: number;
}

/** Slurm's documented example (`TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=2.0`). */
export const DEFAULT_TRES_WEIGHTS: Readonly<TresWeights> = Object.freeze({ cpu: 1, memGiB: 0.25, gpu: 2 });

/** What one node's share costs per second. */
export function shareRate(s: Pick<NodeShare, "cores" | "memMiB" | "gpus">, w: TresWeights): number {
  return s.cores.length * w.cpu + (s.memMiB / 1024) * w.memGiB + s.gpus.length * w.gpu;
}

/** What a whole node costs per second (a job without a resource request holds it all; no resources: one core). */
export function nodeRate(r: NodeResources | undefined, w: TresWeights): number {
  return r ? r.cores * w.cpu + (r.memMiB / 1024) * w.memGiB + r.gpus.length * w.gpu : w.cpu;
}

/** Billing units per second of a running job: the sum of its shares, or of its nodes whole. */
export function jobRate(job: { shares?: readonly NodeShare[]; nodes: readonly string[] }, node: (name: string) => NodeResources | undefined, w: TresWeights): number {
  let rate = 0;
  if (job.shares) for (const s of job.shares) rate += shareRate(s, w);
  else for (const n of job.nodes) rate += nodeRate(node(n), w);
  return rate;
}

/** A user's usage: `decayed` as of `at` (epoch ms), `raw` never decayed (billing-unit seconds). */
interface Account {
  decayed: number;
  raw: number;
  at: number;
}

/**
 * Every user's usage, decayed with a half-life (seconds; 0: never decayed). Usage is charged for
 * an interval at a rate (`charge`); what was charged loses half its weight every half-life.
 */
export class UsageBook {
  private readonly accounts = new Map<string, Account>();

  constructor(readonly halfLife: number) {}

  /** `rate` billing units per second from `from` to `to` (epoch ms). */
  charge(user: string, rate: number, from: number, to: number): void {
    if (!(to > from) || !(rate > 0)) return;
    const a = this.account(user, to);
    const secs = (to - from) / 1000;
    a.raw += rate * secs;
    // The interval's usage as of `to`: the integral of rate * 2^(-(to - s)/h) over it; decayed on
    // to the account's time if that is later (charges may come in any order).
    const atTo = this.halfLife > 0 ? ((rate * this.halfLife) / Math.LN2) * (1 - 2 ** (-secs / this.halfLife)) : rate * secs;
    a.decayed += this.decay({ decayed: atTo, raw: 0, at: to }, a.at);
  }

  /** The user's decayed usage at `now`. */
  usage(user: string, now: number): number {
    const a = this.accounts.get(user);
    return a ? this.decay(a, now) : 0;
  }

  raw(user: string): number {
    return this.accounts.get(user)?.raw ?? 0;
  }

  users(): IterableIterator<string> {
    return this.accounts.keys();
  }

  private decay(a: Account, now: number): number {
    if (this.halfLife <= 0 || now <= a.at) return a.decayed;
    return a.decayed * 2 ** (-(now - a.at) / 1000 / this.halfLife);
  }

  /** The account brought to `t` (a charge never moves it back). */
  private account(user: string, t: number): Account {
    let a = this.accounts.get(user);
    if (!a) this.accounts.set(user, (a = { decayed: 0, raw: 0, at: t }));
    else if (t > a.at) {
      a.decayed = this.decay(a, t);
      a.at = t;
    }
    return a;
  }
}

/** One user's line of `ebb share` (Slurm's sshare). */
export interface ShareRow {
  user: string;
  /** Shares given in the config (default 1). */
  rawShares: number;
  /** Its part of all shares of the users counted. */
  normShares: number;
  /** Billing-unit seconds used, never decayed. */
  rawUsage: number;
  /** Billing-unit seconds, decayed to now. */
  decayedUsage: number;
  /** Its part of all decayed usage. */
  effectiveUsage: number;
  /** 2^(-effectiveUsage / normShares). */
  factor: number;
}

/**
 * The fair-share factor of every user in `users` (those with shares in the config, usage, or jobs
 * waiting): shares are normalized over them, usage over all of theirs.
 */
export function fairShare(users: Iterable<string>, book: UsageBook, shares: Readonly<Record<string, number>>, now: number): Map<string, ShareRow> {
  const rows = new Map<string, ShareRow>();
  let sumShares = 0;
  let sumUsage = 0;
  for (const user of users) {
    if (rows.has(user)) continue;
    const rawShares = Object.hasOwn(shares, user) ? shares[user]! : 1;
    const decayedUsage = book.usage(user, now);
    rows.set(user, { user, rawShares, normShares: 0, rawUsage: book.raw(user), decayedUsage, effectiveUsage: 0, factor: 1 });
    sumShares += rawShares;
    sumUsage += decayedUsage;
  }
  for (const r of rows.values()) {
    r.normShares = sumShares > 0 ? r.rawShares / sumShares : 0;
    r.effectiveUsage = sumUsage > 0 ? r.decayedUsage / sumUsage : 0;
    // No shares: the least factor there is, unless it used nothing.
    r.factor = r.effectiveUsage === 0 ? 1 : r.normShares > 0 ? 2 ** (-r.effectiveUsage / r.normShares) : 0;
  }
  return rows;
}
