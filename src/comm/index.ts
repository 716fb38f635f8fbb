/**
 * ebb/comm: message passing for Bun programs run by ebb.
 *
 *   const world = await initWorld(bootstrap);
 *   await world.send(1, new Float64Array(n), 7);
 *   const { data, source, tag } = await world.recv(ANY_SOURCE, 7);
 *   const total = await world.allreduce(x, "sum");
 */

// ---- communicators and messages ----
export { ANY_SOURCE, ANY_TAG, BaseComm, Comm, contextOf, Intercomm, MAX_TAG, RESERVED_CONTEXTS } from "./comm.ts";
export type { CommInit, IntercommInit, Message, Widen } from "./comm.ts";
export type { Json, Payload, TypedArray } from "./codec.ts";
export { OPS } from "./reduce.ts";
export type { Op, Reducible } from "./reduce.ts";

// ---- wire-up and worlds ----
export { cardKey } from "../proto/adapt.ts";
export { createWorld, currentTransport, finalize, initWorld, openTransport, parseCard } from "./world.ts";
export type { Bootstrap, WorldOptions } from "./world.ts";
export { Transport } from "./transport.ts";
export type { Card, TransportOptions } from "./transport.ts";

// ---- errors ----
export { CommError, CommUsageError, InvalidCommError, PeerFailedError, TransportClosedError } from "./errors.ts";

// ---- instrumentation: time inside comm calls, per iteration ----
export { commCallsInFlight, commTime, resetCommTime } from "./timing.ts";
// ---- CFG monitoring: name the next call's site (otherwise derived from the call's arguments) ----
export { callSite } from "./cfg.ts";

// ---- the elastic adaptation window: initAdapt, probeAdapt, adaptBegin, adaptCommit ----
export { adaptBegin, adaptCommit, finalizeAdapt, initAdapt, probeAdapt, reportProgram, world } from "./adapt.ts";
export type { AdaptStatus, Probe, ProbeStatus, Window } from "./adapt.ts";

// ---- redistribution helpers: block and block-cyclic layouts, contention-free moves ----
export { blockCyclic2dLayout, blockCyclicLayout, blockLayout, blockRange, cyclicLocal, localShape, numroc, squarestGrid } from "./layout.ts";
export type { Grid2d, Layout } from "./layout.ts";
export { applyPlan, planMove } from "./schedule.ts";
export type { Message as MoveMessage, Plan } from "./schedule.ts";
export { commMover, redistribute, REDISTRIBUTE_TAG, windowMover } from "./redistribute.ts";
export type { Mover } from "./redistribute.ts";
