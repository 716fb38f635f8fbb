/**
 * One level of the distributed reduction (§10.2.3) over a step's launch tree: a node's own CFG
 * (or none, at the launcher) and the newest merged CFG of each child's subtree combine into this
 * subtree's, which goes one level up. Every level applies the same `mergeCfg`, so the step root
 * holds the whole step's CFG. Pure: the caller decides when to send (`merged()`), e.g. at most
 * once per sampling interval and at once when the subtree is complete.
 */
import { mergeCfg } from "./merge.ts";
import type { NodeCfg } from "./node.ts";

/** What one level sends up: the subtree's CFG, whether it is final, why (part of) it is unmonitored. */
export interface SubtreeReport {
  cfg: NodeCfg;
  /** Every node of the subtree has sent its last report (or is lost). */
  final: boolean;
  monitor?: string;
  /** Fewest reports any node of the subtree has made (a node's first report spans its ranks' start-up). */
  reports: number;
}

interface Part {
  cfg: NodeCfg;
  final: boolean;
  monitor?: string;
  reports: number;
}

export class SubtreeCfg {
  private own: Part | undefined;
  private readonly parts = new Map<number, Part>();
  private readonly lost = new Set<number>();
  private changed = false;
  private readonly children: number[];

  /**
   * `children`: indices of the child subtrees; `hasOwn`: whether this level has ranks of its own
   * (agents do, the launcher does not).
   */
  constructor(
    children: readonly number[],
    private readonly hasOwn = true,
  ) {
    this.children = [...children];
  }

  /** A node re-attached as a child (its parent was lost): its subtree's reports count from now on. */
  adopt(index: number): void {
    if (!this.children.includes(index)) this.children.push(index);
    this.lost.delete(index);
  }

  /** This node's newest reduced CFG. */
  local(cfg: NodeCfg, final: boolean, monitor?: string): void {
    this.own = { cfg, final: final || (this.own?.final ?? false), monitor: monitor ?? this.own?.monitor, reports: (this.own?.reports ?? 0) + 1 };
    this.changed = true;
  }

  /** A child subtree's newest report (older ones are replaced; a final one stays final). */
  child(index: number, r: SubtreeReport): void {
    if (!this.children.includes(index) || this.lost.has(index)) return;
    const before = this.parts.get(index);
    if (before?.final) return;
    this.parts.set(index, { cfg: r.cfg, final: r.final, monitor: r.monitor, reports: r.reports });
    this.changed = true;
  }

  /** A child subtree is gone: its last report stays, it is no longer waited for. */
  childLost(index: number): void {
    if (!this.children.includes(index) || this.lost.has(index)) return;
    this.lost.add(index);
    this.changed = true;
  }

  /** Something arrived since the last `merged()`. */
  get dirty(): boolean {
    return this.changed;
  }

  /** This subtree has nothing more to report. */
  get complete(): boolean {
    if (this.hasOwn && !this.own?.final) return false;
    return this.children.every((c) => this.lost.has(c) || this.parts.get(c)?.final === true);
  }

  /** The subtree's CFG now, or undefined while nothing has been reported. */
  merged(): SubtreeReport | undefined {
    const parts = [...(this.own ? [this.own] : []), ...this.parts.values()];
    if (parts.length === 0) return undefined;
    this.changed = false;
    const monitor = parts.find((p) => p.monitor !== undefined)?.monitor;
    // Nodes that have not reported yet count as 0 reports.
    const silent = (this.hasOwn && !this.own) || this.children.some((c) => !this.parts.has(c) && !this.lost.has(c));
    return {
      cfg: parts.length === 1 ? parts[0]!.cfg : mergeCfg(parts.map((p) => p.cfg)),
      final: this.complete,
      ...(monitor !== undefined ? { monitor } : {}),
      reports: silent ? 0 : Math.min(...parts.map((p) => p.reports)),
    };
  }
}
