import type { PmiBackend, SpawnRequest } from "./backend.ts";
import { KEYLEN_MAX } from "./limits.ts";
import type { PmiMessage } from "./message.ts";
import { type Outcome, type Result, errorText } from "./outcome.ts";

/** Why a key may not be put, or undefined. `PMI_` keys are read-only (RFC 13, newer Hydra). */
export function validKey(key: string): string | undefined {
  if (key.length > KEYLEN_MAX) return `key longer than ${KEYLEN_MAX} characters`;
  if (key.startsWith("PMI_")) return "keys with the PMI_ prefix are reserved";
  return undefined;
}

export const spawnedTotal = (req: SpawnRequest): number => req.commands.reduce((n, c) => n + c.maxprocs, 0);

const RESERVED = new Set(["cmd", "rc", "thrid", "msg", "errmsg"]);

/** Hand an unknown command to the backend's extension hook; undefined if it does not take it. */
export function extensionReply(
  b: PmiBackend,
  m: PmiMessage,
  ok: (pairs: Array<[string, string]>) => Outcome,
  fail: (message: string) => Outcome,
): Result | undefined {
  const args = m.args();
  delete args.thrid;
  const pending = b.extension?.(m.cmd, args);
  if (pending === undefined) return undefined;
  return Promise.resolve(pending).then(
    (res) => {
      const pairs: Array<[string, string]> = [];
      for (const [k, v] of Object.entries(res)) {
        if (RESERVED.has(k)) return fail(`extension reply uses the reserved key ${k}`);
        pairs.push([k, String(v)]);
      }
      return ok(pairs);
    },
    (e: unknown) => fail(errorText(e)),
  );
}
