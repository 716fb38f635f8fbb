/** Operation classes of a communication call (the reduction collapses P2p and OneSided runs). */
export const OpType = {
  Other: 0,
  P2p: 1,
  Collective: 2,
  OneSided: 3,
  Io: 4,
} as const;
export type OpType = (typeof OpType)[keyof typeof OpType];

export const OP_TYPE_NAMES = ["other", "p2p", "collective", "one-sided", "io"] as const;

/** Point-to-point and one-sided calls are matched as one block across ranks (§10.2.2 rule 2). */
export function collapsible(t: OpType): boolean {
  return t === OpType.P2p || t === OpType.OneSided;
}
