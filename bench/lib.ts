/**
 * Benchmark reporting: every figure is printed with the baseline measured in the same run and
 * their ratio, so a result means something on whatever machine it ran on.
 */
import { table } from "../src/util/table.ts";

export interface Figure {
  /** What was measured, e.g. "launch 4 ranks on 2 nodes". */
  name: string;
  value: number;
  unit: string;
  /** The same thing done another way in the same run (mpiexec, a bare loop, a static policy). */
  baseline?: { name: string; value: number };
  /** Which direction is better, for the ratio's reading. */
  better: "lower" | "higher";
  /** The target, as text, e.g. "<= 1.0x Hydra" or "< 50 ms". */
  goal?: string;
  /** Whether the goal was met, when it can be judged from the figures. */
  met?: boolean;
  /** Resources used beside the figure, as text (e.g. CPU time per rank, ebb's and the baseline's). */
  cpu?: string;
}

export interface Bench {
  name: string;
  description: string;
  run(opts: { quick: boolean }): Promise<Figure[]>;
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a >= 1000) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 0.1) return v.toFixed(2);
  return v.toPrecision(2);
}

export function formatFigures(bench: string, figures: Figure[]): string {
  const rows = figures.map((f) => {
    const ratio = f.baseline && f.baseline.value !== 0 ? f.value / f.baseline.value : undefined;
    return [
      f.name,
      `${fmt(f.value)} ${f.unit}`,
      f.baseline ? `${fmt(f.baseline.value)} ${f.unit} (${f.baseline.name})` : "-",
      ratio === undefined ? "-" : `${ratio.toFixed(2)}x`,
      f.goal ? `${f.goal}${f.met === undefined ? "" : f.met ? "  met" : "  NOT met"}` : "",
      ...(figures.some((g) => g.cpu) ? [f.cpu ?? ""] : []),
    ];
  });
  const cpu = figures.some((g) => g.cpu) ? ["cpu per rank (ebb | baseline)"] : [];
  return `## ${bench}\n${table(["measure", "ebb", "baseline", "ratio", "goal", ...cpu], rows)}`;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
