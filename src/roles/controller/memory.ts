/**
 * The ledger's memory in a canonical form: what a restarted controller must rebuild from the store
 * (ledger.ts `restore`) — every active job's row and allocation in rank order with its share of
 * each node, and which jobs hold each node with which shares. Jobs by id, nodes by name, every object's keys sorted, and any value whose JSON is
 * longer than LONG_VALUE bytes (a job's environment, script, argv, node lists) replaced by its
 * sha256, so that a dump's size grows with the number of jobs only and two dumps compare as text.
 *
 * `ebb controller` writes it to STATE_DIR/memory.json when it gets SIGUSR2 (only its own user, or
 * root, can send that): what the controller holds, for an admin, and what a test compares across
 * a SIGKILL and a restart (test/e2e/controller-restart.test.ts).
 */
import { createHash } from "node:crypto";
import { renameSync, writeFileSync } from "node:fs";
import { compareNames } from "../../sched/batch.ts";
import type { ClusterState } from "./state.ts";

/** Values whose JSON text is longer than this are dumped as their sha256. */
export const LONG_VALUE = 256;

export interface LedgerMemory {
  jobs: { id: number; row: unknown; nodes: string[]; shares: unknown[] }[];
  /** Every known node and the active jobs holding a share of it, by job id. */
  owners: [string, [number, unknown][]][];
}

/** Keys sorted at every level. */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
  );
}

/** A job's row with its keys sorted, each long value as "sha256:HEX". */
function canonicalRow(row: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(row).sort()) {
    const v = (row as Record<string, unknown>)[k];
    if (v === null || typeof v !== "object") {
      out[k] = typeof v === "string" && v.length > LONG_VALUE ? digest(v) : v;
      continue;
    }
    const s = sorted(v);
    const json = JSON.stringify(s);
    out[k] = json.length > LONG_VALUE ? digest(json) : s;
  }
  return out;
}

const digest = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

export function ledgerMemory(state: ClusterState): LedgerMemory {
  const jobs = [...state.jobs.values()].sort((a, b) => a.row.id - b.row.id).map((j) => ({ id: j.row.id, row: canonicalRow(j.row), nodes: [...j.nodes], shares: j.shares.map(sorted) }));
  const owners = [...state.nodes.values()]
    .sort((a, b) => compareNames(a.row.name, b.row.name))
    .map((n): [string, [number, unknown][]] => [n.row.name, [...n.shares].sort((a, b) => a[0] - b[0]).map(([id, share]) => [id, sorted(share)])]);
  return { jobs, owners };
}

/** Writes the dump to `path` whole (a reader never sees half of it), readable by the controller's user only. */
export function dumpLedgerMemory(state: ClusterState, path: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(ledgerMemory(state))}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}
