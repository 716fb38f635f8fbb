/**
 * bun:ffi, loaded at its first use. Loading it costs a few ms of CPU, which every rank would
 * otherwise pay at start-up (and a grow starts its joining ranks all at once) for shared-memory
 * rings and direct TCP reads it may never use.
 */
export function ffi(): typeof import("bun:ffi") {
  return require("bun:ffi") as typeof import("bun:ffi");
}
