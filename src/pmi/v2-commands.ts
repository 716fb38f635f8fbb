import type { PmiBackend, SpawnRequest } from "./backend.ts";
import { PmiCodecError } from "./errors.ts";
import { V2_MAX_VALUE } from "./limits.ts";
import type { PmiMessage } from "./message.ts";
import { type Outcome, type Result, errorText } from "./outcome.ts";
import { extensionReply, spawnedTotal, validKey } from "./shared.ts";
import { type Pair, formatV2, parseV2Spawn, v2Msg } from "./v2.ts";

/**
 * PMI-2 commands once fullinit has bound the rank. Key order follows Hydra 4.0
 * (`pmip_pmi_v2.c`, `pmiserv_pmi_v2.c`): `thrid` (echoed) first, `rc` last on success.
 */

/** A reply frame; a `thrid` in the request is echoed right after `cmd`. */
export function v2Reply(m: PmiMessage, pairs: readonly Pair[]): Outcome {
  const thrid = m.get("thrid");
  const all: Pair[] = thrid === undefined ? [...pairs] : [["thrid", thrid], ...pairs];
  try {
    return { reply: formatV2(`${m.cmd}-response`, all) };
  } catch (e) {
    return v2Error(m, errorText(e));
  }
}

export function v2Error(m: { cmd: string; get(key: string): string | undefined }, message: string, rc = -1): Outcome {
  const thrid = m.get("thrid");
  const head: Pair[] = thrid === undefined ? [] : [["thrid", thrid]];
  return { reply: formatV2(`${m.cmd}-response`, [...head, ["rc", rc], ["errmsg", v2Msg(message)]]) };
}

const need = (m: PmiMessage, key: string): string => {
  const v = m.get(key);
  if (v === undefined || v === "") throw new PmiCodecError(`missing ${key}`, m.cmd);
  return v;
};

const found = (value: string | undefined): Pair[] =>
  value === undefined ? [["found", "FALSE"], ["rc", 0]] : [["found", "TRUE"], ["value", value], ["rc", 0]];

export function handleV2(m: PmiMessage, b: PmiBackend): Result {
  try {
    return dispatch(m, b);
  } catch (e) {
    return v2Error(m, errorText(e));
  }
}

function dispatch(m: PmiMessage, b: PmiBackend): Result {
  const info = b.info;
  switch (m.cmd) {
    case "job-getid":
      return v2Reply(m, [["jobid", info.jobId], ["rc", 0]]);
    case "kvs-put": {
      const key = need(m, "key");
      const value = m.get("value") ?? "";
      const bad = validKey(key) ?? (value.length > V2_MAX_VALUE ? `value longer than ${V2_MAX_VALUE}` : undefined);
      if (bad) return v2Error(m, bad);
      b.put(key, value);
      return v2Reply(m, [["rc", 0]]);
    }
    case "kvs-fence":
      return b.fence().then(
        () => v2Reply(m, [["rc", 0]]),
        (e: unknown) => v2Error(m, errorText(e)),
      );
    case "kvs-get": {
      const key = need(m, "key");
      const value = key.startsWith("PMI_") ? (b.jobAttr(key) ?? b.get(key) ?? "") : b.get(key);
      return v2Reply(m, found(value));
    }
    case "info-getjobattr": {
      const key = need(m, "key");
      const value = b.jobAttr(key) ?? (key === "universeSize" && info.universeSize >= 0 ? String(info.universeSize) : undefined);
      return v2Reply(m, found(value));
    }
    case "info-putnodeattr": {
      const key = need(m, "key");
      const value = m.get("value") ?? "";
      const bad = validKey(key) ?? (value.length > V2_MAX_VALUE ? `value longer than ${V2_MAX_VALUE}` : undefined);
      if (bad) return v2Error(m, bad);
      b.nodeAttrPut(key, value);
      return v2Reply(m, [["rc", 0]]);
    }
    case "info-getnodeattr": {
      const key = need(m, "key");
      const wait = m.get("wait") === undefined ? false : m.bool("wait");
      if (wait === undefined) return v2Error(m, `wait must be TRUE or FALSE, got ${m.get("wait")}`);
      return b.nodeAttrGet(key, wait).then((v) => v2Reply(m, found(v)));
    }
    case "name-publish": {
      const name = need(m, "name");
      return b.publish(name, need(m, "port")).then((ok) =>
        ok ? v2Reply(m, [["rc", 0]]) : v2Error(m, `duplicate_service_${name}`, 1),
      );
    }
    case "name-unpublish": {
      const name = need(m, "name");
      return b.unpublish(name).then((ok) => (ok ? v2Reply(m, [["rc", 0]]) : v2Error(m, `service_${name}_not_found`, 1)));
    }
    case "name-lookup":
      // Hydra answers `port=`, which MPICH reads; Slurm's libpmi2 reads `value=`. Send both.
      return b.lookup(need(m, "name")).then((port) =>
        port !== undefined
          ? v2Reply(m, [["port", port], ["value", port], ["found", "TRUE"], ["rc", 0]])
          : v2Reply(m, [["found", "FALSE"], ["rc", 1]]),
      );
    case "spawn":
      return spawn(m, b);
    case "finalize":
      b.finalize();
      return { ...v2Reply(m, [["rc", 0]]), finalized: true };
    case "abort":
      b.abort(m.int("exitcode") ?? 1, m.get("message") ?? m.get("msg") ?? "");
      return { close: true };
    case "job-connect":
    case "job-disconnect":
      return v2Error(m, `${m.cmd} is not supported`);
    default: {
      const ext = extensionReply(b, m, (pairs) => v2Reply(m, [["rc", 0], ...pairs]), (msg) => v2Error(m, msg));
      return ext ?? v2Error(m, `unknown command ${m.cmd}`);
    }
  }
}

function spawn(m: PmiMessage, b: PmiBackend): Result {
  let req: SpawnRequest;
  try {
    req = parseV2Spawn(m);
  } catch (e) {
    return v2Error(m, errorText(e));
  }
  return b.spawn(req).then(
    (res) => {
      if (res.rc !== 0) return v2Error(m, res.message ?? "spawn failed", res.rc);
      const codes = res.errcodes?.length === spawnedTotal(req) ? res.errcodes : undefined;
      const pairs: Pair[] = [["rc", 0], ["jobid", res.jobId ?? ""], ["nerrs", codes?.filter((c) => c !== 0).length ?? 0]];
      if (codes) pairs.push(["errcodes", codes.join(",")]);
      return v2Reply(m, pairs);
    },
    (e: unknown) => v2Error(m, errorText(e)),
  );
}
