import type { ArgsDef } from "citty";

/** Keeps flag definitions' literal types for citty (arrays stay mutable, unlike `as const`). */
export function defineArgs<const T extends ArgsDef>(args: T): T {
  return args;
}
