import type { PmiBackend, SpawnRequest } from "./backend.ts";
import { PmiCodecError } from "./errors.ts";
import { KEYLEN_MAX, KVSNAME_MAX, VALLEN_MAX } from "./limits.ts";
import { parseMcmdSpawn } from "./mcmd.ts";
import type { PmiMessage } from "./message.ts";
import { type Outcome, type Result, errorText } from "./outcome.ts";
import { extensionReply, spawnedTotal, validKey } from "./shared.ts";
import { type Pair, formatV1, unescapeV1, v1Msg } from "./v1.ts";

/** PMI-1 commands once the rank is known. Reply strings and key order follow Hydra 4.0 (`pmip_pmi_v1.c`, `pmiserv_pmi_v1.c`). */

const RESPONSE = new Map([
  ["init", "response_to_init"],
  ["initack", "initack"],
  ["get_maxes", "maxes"],
  ["get_appnum", "appnum"],
  ["get_my_kvsname", "my_kvsname"],
  ["get_universe_size", "universe_size"],
  ["put", "put_result"],
  ["get", "get_result"],
  ["barrier_in", "barrier_out"],
  ["finalize", "finalize_ack"],
  ["publish_name", "publish_result"],
  ["unpublish_name", "unpublish_result"],
  ["lookup_name", "lookup_result"],
  ["spawn", "spawn_result"],
]);

export const v1Response = (cmd: string): string => RESPONSE.get(cmd) ?? `${cmd}_result`;

/** `cmd=<response> rc=<rc> msg=<text>`: the PMI-1 error reply every MPICH client understands. */
export function v1Error(cmd: string, message: string, rc = -1, extra: readonly Pair[] = []): Outcome {
  return { reply: formatV1(v1Response(cmd), [...extra, ["rc", rc], ["msg", v1Msg(message)]]) };
}

/** A reply that may not fit (long value): fall back to an error reply saying so. */
function reply(cmd: string, pairs: readonly Pair[]): Outcome {
  try {
    return { reply: formatV1(v1Response(cmd), pairs) };
  } catch (e) {
    return v1Error(cmd, errorText(e));
  }
}

const need = (m: PmiMessage, key: string): string => {
  const v = m.get(key);
  if (v === undefined || v === "") throw new PmiCodecError(`missing ${key}`, m.cmd);
  return v;
};

export function handleV1(m: PmiMessage, b: PmiBackend): Result {
  try {
    return dispatch(m, b);
  } catch (e) {
    return v1Error(m.cmd, errorText(e));
  }
}

function dispatch(m: PmiMessage, b: PmiBackend): Result {
  const info = b.info;
  switch (m.cmd) {
    case "get_maxes":
      return reply("get_maxes", [
        ["kvsname_max", KVSNAME_MAX],
        ["keylen_max", KEYLEN_MAX],
        ["vallen_max", VALLEN_MAX],
      ]);
    case "get_appnum":
      return reply("get_appnum", [["appnum", info.appnum]]);
    case "get_my_kvsname":
      return reply("get_my_kvsname", [["kvsname", info.kvsname]]);
    case "get_universe_size":
      return reply("get_universe_size", [["size", info.universeSize]]);
    case "put": {
      const key = need(m, "key");
      const value = m.get("value") ?? "";
      const bad = validKey(key) ?? (value.length > VALLEN_MAX ? `value longer than ${VALLEN_MAX}` : undefined);
      if (bad) return v1Error("put", bad);
      b.put(key, value);
      return reply("put", [["rc", 0], ["msg", "success"]]);
    }
    case "get": {
      const key = need(m, "key");
      // Reserved keys are job attributes; a missing one reads as empty, not as an error (RFC 13).
      const value = key.startsWith("PMI_") ? (b.jobAttr(key) ?? b.get(key) ?? "") : b.get(key);
      if (value === undefined) return reply("get", [["rc", -1], ["msg", v1Msg(`key_${key}_not_found`)], ["value", "unknown"]]);
      return reply("get", [["rc", 0], ["msg", "success"], ["value", value]]);
    }
    case "barrier_in": {
      const group = m.get("group");
      if (group !== undefined && group !== "WORLD") return v1Error("barrier_in", "barrier groups are not supported");
      return b.fence().then(
        () => reply("barrier_in", []),
        (e: unknown) => v1Error("barrier_in", errorText(e)),
      );
    }
    case "finalize":
      b.finalize();
      return { ...reply("finalize", []), finalized: true };
    case "abort": {
      const at = m.raw.indexOf(" message=");
      b.abort(m.int("exitcode") ?? 1, at < 0 ? "" : unescapeV1(m.raw.slice(at + 9)));
      return { close: true };
    }
    case "publish_name":
      return b.publish(need(m, "service"), need(m, "port")).then((ok) =>
        ok
          ? reply("publish_name", [["info", "ok"], ["rc", 0], ["msg", "success"]])
          : reply("publish_name", [["info", "fail"], ["rc", 1], ["msg", "key_already_present"]]),
      );
    case "unpublish_name":
      return b.unpublish(need(m, "service")).then((ok) =>
        ok
          ? reply("unpublish_name", [["info", "ok"], ["rc", 0], ["msg", "success"]])
          : reply("unpublish_name", [["info", "fail"], ["rc", 1], ["msg", "service_not_found"]]),
      );
    case "lookup_name":
      return b.lookup(need(m, "service")).then((port) =>
        port !== undefined
          ? reply("lookup_name", [["port", port], ["info", "ok"], ["rc", 0], ["msg", "success"]])
          : reply("lookup_name", [["info", "fail"], ["rc", 1], ["msg", "service_not_found"]]),
      );
    default: {
      const ext = extensionReply(b, m, (pairs) => reply(m.cmd, [["rc", 0], ...pairs]), (msg) => v1Error(m.cmd, msg));
      return ext ?? v1Error(m.cmd, `unknown command ${m.cmd}`);
    }
  }
}

/** The lines of one complete `mcmd=spawn` request. */
export function spawnV1(lines: readonly string[], b: PmiBackend): Result {
  let req: SpawnRequest;
  try {
    req = parseMcmdSpawn(lines);
  } catch (e) {
    return v1Error("spawn", errorText(e));
  }
  return b.spawn(req).then(
    (res) => {
      if (res.rc !== 0) return v1Error("spawn", res.message ?? "spawn failed", res.rc);
      const codes = res.errcodes?.length === spawnedTotal(req) ? [["errcodes", res.errcodes.join(",")] as const] : [];
      return reply("spawn", [["rc", 0], ...codes]);
    },
    (e: unknown) => v1Error("spawn", errorText(e)),
  );
}
