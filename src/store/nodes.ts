/** Queries on the node registry. */
import { asc, eq } from "drizzle-orm";
import type { Db } from "./db.ts";
import type { NodeResources } from "../domain/resources.ts";

type Tx = Pick<Db, "insert" | "update" | "select">;
import { nodes } from "./schema.ts";

export type NodeRow = typeof nodes.$inferSelect;

/** What a node has, as placement and the API see it: its cores, memory, GPUs and features. */
export function nodeResources(row: NodeRow): NodeResources {
  return { cores: row.cpus, memMiB: row.memoryMb, gpus: row.gpus, features: row.features };
}

export function upsertNode(db: Tx, row: NodeRow): void {
  db.insert(nodes)
    .values(row)
    .onConflictDoUpdate({ target: nodes.name, set: { cpus: row.cpus, memoryMb: row.memoryMb, gpus: row.gpus, features: row.features, addr: row.addr, status: row.status, reason: row.reason, updatedAt: row.updatedAt } })
    .run();
}

export function setNodeStatus(db: Tx, name: string, status: NodeRow["status"], reason: string | null, time: number): void {
  db.update(nodes).set({ status, reason, updatedAt: time }).where(eq(nodes.name, name)).run();
}

export function listNodes(db: Tx): NodeRow[] {
  return db.select().from(nodes).orderBy(asc(nodes.name)).all();
}

/** `reason` set: the node is drained (takes no new work); null: resumed, neither drained nor its owner's. */
export function setNodeDrain(db: Tx, name: string, reason: string | null, time: number): void {
  db.update(nodes)
    .set(reason === null ? { drain: null, ownerSince: null, updatedAt: time } : { drain: reason, updatedAt: time })
    .where(eq(nodes.name, name))
    .run();
}

/** `since` set: the node's owner wants it back (`ebb drain --owner`) since then; null: resumed. */
export function setNodeOwner(db: Tx, name: string, since: number | null, time: number): void {
  db.update(nodes).set({ ownerSince: since, updatedAt: time }).where(eq(nodes.name, name)).run();
}
