/**
 * The adaptation protocol's reductions over the step tree (docs/adaptation.md §5.2). For each
 * adaptation and round, probe counts and racers combine by max (a racer is 0 or 1), arrivals and
 * commits by sum. Agents and the step root keep the same reducers; each of the up-messages
 * adapt.counted / checked / arrived / committed carries one subtree's result. Round 0's arrivals
 * (joining ranks in ebb-begin) also carry the subtree's joining ranks' business cards, merged.
 */
import type { StepUp } from "../proto/step.ts";
import { TreeReduce } from "./reduce.ts";

export type AdaptKind = "counted" | "checked" | "arrived" | "committed";

/** One reduction of the adaptation protocol, combined over a subtree. */
export interface AdaptReport {
  kind: AdaptKind;
  adaptId: number;
  /** The round of counts, targets and arrivals; commits have one round, 0. */
  round: number;
  value: number;
  /** Arrivals of round 0: the joining ranks' business cards by card key. */
  cards?: Record<string, string>;
}

/** A reduction's value over a subtree: the number, and the cards met on the way (arrivals of round 0). */
type Part = { value: number; cards?: Record<string, string> };

/** The reduction an up-message carries, or undefined if it carries none. */
export function adaptReportOf(msg: StepUp): AdaptReport | undefined {
  switch (msg.t) {
    case "adapt.counted":
      return { kind: "counted", adaptId: msg.adaptId, round: msg.round, value: msg.max };
    case "adapt.checked":
      return { kind: "checked", adaptId: msg.adaptId, round: msg.round, value: msg.racer ? 1 : 0 };
    case "adapt.arrived":
      return { kind: "arrived", adaptId: msg.adaptId, round: msg.round, value: msg.count, ...(msg.cards ? { cards: msg.cards } : {}) };
    case "adapt.committed":
      return { kind: "committed", adaptId: msg.adaptId, round: 0, value: msg.count };
    default:
      return undefined;
  }
}

/** The up-message that carries `r` for `step`. */
export function adaptMessage(step: string, r: AdaptReport): StepUp {
  const { adaptId, round, value, cards } = r;
  switch (r.kind) {
    case "counted":
      return { t: "adapt.counted", step, adaptId, round, max: value };
    case "checked":
      return { t: "adapt.checked", step, adaptId, round, racer: value > 0 };
    case "arrived":
      return { t: "adapt.arrived", step, adaptId, round, count: value, ...(cards ? { cards } : {}) };
    case "committed":
      return { t: "adapt.committed", step, adaptId, count: value };
  }
}

export class AdaptReductions {
  private readonly max: TreeReduce<Part>;
  private readonly sum: TreeReduce<Part>;

  /** `report` gets each reduction once this node's part and every live child's have come in. */
  constructor(children: readonly number[], report: (r: AdaptReport) => void) {
    const send = (key: string, { value, cards }: Part) => {
      const [kind, adaptId, round] = key.split(":") as [AdaptKind, string, string];
      report({ kind, adaptId: Number(adaptId), round: Number(round), value, ...(cards ? { cards } : {}) });
    };
    const combine = (op: (a: number, b: number) => number) => (a: Part, b: Part): Part => ({
      value: op(a.value, b.value),
      ...(a.cards || b.cards ? { cards: { ...a.cards, ...b.cards } } : {}),
    });
    this.max = new TreeReduce<Part>(children, combine(Math.max), send);
    this.sum = new TreeReduce<Part>(children, combine((a, b) => a + b), send);
  }

  /** This node's own part of a reduction (`cards`: its joining ranks', with their arrival in round 0). */
  local(kind: AdaptKind, adaptId: number, round: number, value: number, cards?: Record<string, string>): void {
    this.of(kind).local(keyOf(kind, adaptId, round), cards ? { value, cards } : { value });
  }

  /** A child's part (from its up-message). */
  child(index: number, r: AdaptReport): void {
    this.of(r.kind).child(keyOf(r.kind, r.adaptId, r.round), index, r.cards ? { value: r.value, cards: r.cards } : { value: r.value });
  }

  childLost(index: number): void {
    this.max.childLost(index);
    this.sum.childLost(index);
  }

  /** A node re-attached as a child (see TreeReduce.adopt). */
  adopt(index: number): void {
    this.max.adopt(index);
    this.sum.adopt(index);
  }

  /** An adaptation is over: forget its reductions. */
  clear(): void {
    this.max.clear();
    this.sum.clear();
  }

  private of(kind: AdaptKind): TreeReduce<Part> {
    return kind === "counted" || kind === "checked" ? this.max : this.sum;
  }
}

const keyOf = (kind: AdaptKind, adaptId: number, round: number) => `${kind}:${adaptId}:${round}`;
