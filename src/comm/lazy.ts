/**
 * Built-in modules ebb/comm loads at their first use. Every rank loads ebb/comm at start-up, and a
 * grow starts its joining ranks all at once, inside the resize: `bun:ffi` costs a few ms of CPU,
 * `node:fs` as many, and a rank may never need either (shared-memory rings and direct TCP reads
 * use ffi; rings, CFG tables and a missing socket directory use fs).
 */
export function ffi(): typeof import("bun:ffi") {
  return require("bun:ffi") as typeof import("bun:ffi");
}

export function fs(): typeof import("node:fs") {
  return require("node:fs") as typeof import("node:fs");
}
