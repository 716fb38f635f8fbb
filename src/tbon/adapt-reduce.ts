/**
 * The adaptation protocol's reductions over the step tree (docs/adaptation.md §5.2). For each
 * adaptation and round, probe counts and racers combine by max (a racer is 0 or 1), arrivals and
 * commits by sum. Agents and the step root keep the same reducers; each of the up-messages
 * adapt.counted / checked / arrived / committed carries one subtree's result.
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
}

/** The reduction an up-message carries, or undefined if it carries none. */
export function adaptReportOf(msg: StepUp): AdaptReport | undefined {
  switch (msg.t) {
    case "adapt.counted":
      return { kind: "counted", adaptId: msg.adaptId, round: msg.round, value: msg.max };
    case "adapt.checked":
      return { kind: "checked", adaptId: msg.adaptId, round: msg.round, value: msg.racer ? 1 : 0 };
    case "adapt.arrived":
      return { kind: "arrived", adaptId: msg.adaptId, round: msg.round, value: msg.count };
    case "adapt.committed":
      return { kind: "committed", adaptId: msg.adaptId, round: 0, value: msg.count };
    default:
      return undefined;
  }
}

/** The up-message that carries `r` for `step`. */
export function adaptMessage(step: string, r: AdaptReport): StepUp {
  const { adaptId, round, value } = r;
  switch (r.kind) {
    case "counted":
      return { t: "adapt.counted", step, adaptId, round, max: value };
    case "checked":
      return { t: "adapt.checked", step, adaptId, round, racer: value > 0 };
    case "arrived":
      return { t: "adapt.arrived", step, adaptId, round, count: value };
    case "committed":
      return { t: "adapt.committed", step, adaptId, count: value };
  }
}

export class AdaptReductions {
  private readonly max: TreeReduce<number>;
  private readonly sum: TreeReduce<number>;

  /** `report` gets each reduction once this node's part and every live child's have come in. */
  constructor(children: readonly number[], report: (r: AdaptReport) => void) {
    const send = (key: string, value: number) => {
      const [kind, adaptId, round] = key.split(":") as [AdaptKind, string, string];
      report({ kind, adaptId: Number(adaptId), round: Number(round), value });
    };
    this.max = new TreeReduce<number>(children, Math.max, send);
    this.sum = new TreeReduce<number>(children, (a, b) => a + b, send);
  }

  /** This node's own part of a reduction. */
  local(kind: AdaptKind, adaptId: number, round: number, value: number): void {
    this.of(kind).local(keyOf(kind, adaptId, round), value);
  }

  /** A child's part (from its up-message). */
  child(index: number, r: AdaptReport): void {
    this.of(r.kind).child(keyOf(r.kind, r.adaptId, r.round), index, r.value);
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

  private of(kind: AdaptKind): TreeReduce<number> {
    return kind === "counted" || kind === "checked" ? this.max : this.sum;
  }
}

const keyOf = (kind: AdaptKind, adaptId: number, round: number) => `${kind}:${adaptId}:${round}`;
