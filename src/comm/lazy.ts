/**
 * Built-in modules ebb/comm loads at their first use. Every rank loads ebb/comm at start-up, and a
 * grow starts its joining ranks all at once, inside the resize: `bun:ffi` costs a few ms of CPU,
 * `node:fs` and `node:os` as many, and a rank may never need them (shared-memory rings and direct
 * TCP reads use ffi; rings, CFG tables and a missing socket directory use fs; a rank that ebb did
 * not start asks os for its host name). `node:path` is not loaded at all: see inDir.
 */
export function ffi(): typeof import("bun:ffi") {
  return require("bun:ffi") as typeof import("bun:ffi");
}

export function fs(): typeof import("node:fs") {
  return require("node:fs") as typeof import("node:fs");
}

export function os(): typeof import("node:os") {
  return require("node:os") as typeof import("node:os");
}

/** node:path's join(dir, name) for a file name without slashes. */
export function inDir(dir: string, name: string): string {
  return `${dir.replace(/(.)\/+$/, "$1")}/${name}`;
}
