import { describe, expect, test } from "bun:test";
import { PmiCodecError } from "../../src/pmi/errors.ts";
import { parseMcmdSpawn } from "../../src/pmi/mcmd.ts";
import { formatV1, parseV1 } from "../../src/pmi/v1.ts";
import { parseV2 } from "../../src/pmi/v2.ts";
import { mulberry32 } from "../../src/sim/random.ts";
import { V1_INIT, V2_INIT, Wire, fakeBackend, frame } from "../support/pmi-wire.ts";

/** Seeded fuzzing of the codecs and of PmiConnection with malformed and oversized input. */

function prng(seed: number) {
  const { next } = mulberry32(seed);
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;
  return { next, int, pick };
}
type Rng = ReturnType<typeof prng>;

const V1_REQUESTS = [
  "cmd=get_maxes\n",
  "cmd=get_appnum\n",
  "cmd=get_my_kvsname\n",
  "cmd=get_universe_size\n",
  "cmd=put kvsname=kvs_42_0 key=k1 value=v1\n",
  "cmd=get kvsname=kvs_42_0 key=k1\n",
  "cmd=get kvsname=kvs_42_0 key=PMI_process_mapping\n",
  "cmd=get kvsname=kvs_42_0 key=big\n",
  "cmd=barrier_in\n",
  "cmd=publish_name service=s port=p\n",
  "cmd=lookup_name service=s\n",
  "cmd=unpublish_name service=s\n",
  "cmd=ebb-probe x=1\n",
  "cmd=finalize\n",
  "mcmd=spawn\nnprocs=1\nexecname=./a\ntotspawns=1\nspawnssofar=1\nargcnt=0\ninfo_num=0\nendcmd\n",
];

const V2_REQUESTS = [
  "cmd=job-getid;thrid=0x1;",
  "cmd=kvs-put;key=k;value=v;;w;",
  "cmd=kvs-get;jobid=42.0;srcid=-1;key=k;",
  "cmd=kvs-get;jobid=42.0;srcid=-1;key=big;",
  "cmd=kvs-fence;",
  "cmd=info-getjobattr;key=PMI_process_mapping;",
  "cmd=info-putnodeattr;key=a;value=b;",
  "cmd=info-getnodeattr;key=a;wait=FALSE;",
  "cmd=name-publish;name=s;port=p;",
  "cmd=name-lookup;name=s;",
  "cmd=spawn;ncmds=1;subcmd=./a;maxprocs=1;argc=0;",
  "cmd=frob;",
];

const JUNK = ["=", " ", "\\", ";", ";;", "\0", "\r", "cmd=", "mcmd=spawn\n", "endcmd\n", "\n", "é", "\u{1F600}", "=;=", "\t"];

function mutate(s: string, r: Rng): string {
  const ops = 1 + r.int(4);
  let out = s;
  for (let i = 0; i < ops; i++) {
    const at = r.int(out.length + 1);
    switch (r.int(4)) {
      case 0:
        out = out.slice(0, at) + r.pick(JUNK) + out.slice(at);
        break;
      case 1:
        out = out.slice(0, at) + out.slice(at + 1 + r.int(5));
        break;
      case 2:
        out = out.slice(0, at) + String.fromCharCode(r.int(256)) + out.slice(at + 1);
        break;
      default:
        out = out.slice(0, at) + out.slice(at).repeat(1 + r.int(3));
    }
  }
  return out;
}

function randomBytes(r: Rng, n: number): Uint8Array {
  return Uint8Array.from({ length: n }, () => r.int(256));
}

/** One client session: mostly plausible traffic, some of it damaged, some of it huge. */
function session(r: Rng, port: boolean): Array<string | Uint8Array> {
  const v2 = r.next() < 0.5;
  const parts: Array<string | Uint8Array> = [];
  if (port && !v2) parts.push(r.next() < 0.8 ? "cmd=initack pmiid=3\n" : mutate(`cmd=initack pmiid=${r.int(5)}\n`, r));
  parts.push(r.next() < 0.9 ? (v2 ? V2_INIT : V1_INIT) : mutate(V1_INIT, r));
  if (v2 && r.next() < 0.9) parts.push(frame("cmd=fullinit;pmirank=3;"));
  const n = 1 + r.int(12);
  for (let i = 0; i < n; i++) {
    const roll = r.next();
    if (v2) {
      const req = r.pick(V2_REQUESTS);
      if (roll < 0.55) parts.push(frame(req));
      else if (roll < 0.75) parts.push(frame(mutate(req, r)));
      else if (roll < 0.82) parts.push(`${String(r.int(1_000_000)).padStart(6)}${req}`);
      else if (roll < 0.88) parts.push(mutate(frame(req), r));
      else if (roll < 0.94) parts.push(frame(`cmd=kvs-put;key=k;value=${"x".repeat(r.int(70_000))};`));
      else parts.push(randomBytes(r, 1 + r.int(64)));
    } else {
      const req = r.pick(V1_REQUESTS);
      if (roll < 0.55) parts.push(req);
      else if (roll < 0.8) parts.push(mutate(req, r));
      else if (roll < 0.88) parts.push(`cmd=put key=big value=${"v".repeat(900 + r.int(2000))}\n`);
      else if (roll < 0.94) parts.push("x".repeat(1000 + r.int(3000)));
      else parts.push(randomBytes(r, 1 + r.int(64)));
    }
  }
  return parts;
}

/** Split the byte stream at random points, as a socket might. */
function chunks(parts: Array<string | Uint8Array>, r: Rng): Uint8Array[] {
  const enc = new TextEncoder();
  const all = parts.map((p) => (typeof p === "string" ? enc.encode(p) : p));
  const total = new Uint8Array(all.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of all) {
    total.set(p, off);
    off += p.length;
  }
  const out: Uint8Array[] = [];
  for (let i = 0; i < total.length; ) {
    const len = 1 + r.int(r.next() < 0.7 ? 40 : 3000);
    out.push(total.subarray(i, i + len));
    i += len;
  }
  return out;
}

/** Split what the server wrote into replies and check each one is well formed for the wire it used. */
function checkReplies(out: string): void {
  const enc = new TextEncoder();
  let wire: 1 | 2 = 1;
  let rest = out;
  while (rest.length > 0) {
    if (wire === 1) {
      const nl = rest.indexOf("\n");
      expect(nl).toBeGreaterThanOrEqual(0);
      const line = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      expect(enc.encode(line).length + 1).toBeLessThanOrEqual(1024);
      const m = parseV1(line);
      expect(m.cmd).toMatch(/^[A-Za-z][A-Za-z0-9_-]*$/);
      if (m.cmd === "response_to_init" && m.get("pmi_version") === "2" && m.get("rc") === "0") wire = 2;
    } else {
      const len = Number(rest.slice(0, 6).trim());
      expect(rest.slice(0, 6)).toMatch(/^ *\d+$/);
      const bytes = enc.encode(rest.slice(6));
      const payload = new TextDecoder().decode(bytes.subarray(0, len));
      expect(enc.encode(payload).length).toBe(len);
      rest = rest.slice(6 + payload.length);
      const m = parseV2(payload);
      expect(m.cmd).toMatch(/-response$/);
      expect(m.get("rc")).toMatch(/^-?\d+$/);
    }
  }
}

describe("PmiConnection fuzz", () => {
  test("random sessions: feed never throws, replies stay well-formed, every self-close is reported", async () => {
    const r = prng(20240611);
    let closedCount = 0;
    for (let s = 0; s < 300; s++) {
      const b = fakeBackend(
        {},
        {
          kvs: { k1: "v 1", big: "b".repeat(1000 + r.int(100)) },
          fence: () => (r.next() < 0.2 ? Promise.reject(new Error("fence failed")) : Promise.resolve()),
          extension: (cmd) => (cmd === "ebb-probe" ? Promise.resolve({ status: "none" }) : undefined),
        },
      );
      // a quarter of the sessions are PMI_PORT connections that must bind themselves first
      const port = r.next() < 0.25;
      const unbound: string[] = [];
      const w = port
        ? new Wire({ byId: (id) => (id === 3 ? b : undefined), onError: (m) => unbound.push(m) })
        : new Wire({ backend: b });
      let written = "";
      for (const c of chunks(session(r, port), r)) {
        expect(() => w.send(c)).not.toThrow();
        if (r.next() < 0.3) await w.settle();
        written += w.take();
      }
      await w.settle();
      written += w.take();
      checkReplies(written);
      if (w.closedByServer) {
        closedCount++;
        expect(b.calls.protocolErrors.length + b.calls.aborts.length + unbound.length).toBe(1);
        for (const m of b.calls.protocolErrors) expect(m).toStartWith("PMI protocol error from rank 3: ");
        for (const m of unbound) expect(m).toStartWith("PMI protocol error from an unidentified PMI connection: ");
        // nothing is written after the connection closed
        w.send(V1_INIT);
        await w.settle();
        expect(w.take()).toBe("");
      } else {
        expect([b.calls.protocolErrors, unbound]).toEqual([[], []]);
      }
    }
    // the generator must actually provoke closes, or this test proves little
    expect(closedCount).toBeGreaterThan(50);
  });

  test("oversized input is always a protocol error, however it is chunked", async () => {
    const r = prng(99);
    for (let s = 0; s < 50; s++) {
      const b = fakeBackend();
      const w = new Wire({ backend: b });
      const v2 = r.next() < 0.5;
      const parts = v2
        ? [V2_INIT, frame("cmd=fullinit;pmirank=3;"), `${"999999"}cmd=kvs-put;`]
        : [V1_INIT, `cmd=put key=k value=${"v".repeat(1024 + r.int(5000))}\n`];
      for (const c of chunks(parts, r)) w.send(c);
      await w.settle();
      expect(w.closedByServer).toBe(true);
      expect(b.calls.protocolErrors).toEqual([
        v2
          ? "PMI protocol error from rank 3: PMI-2 message of 999999 bytes exceeds 65530"
          : "PMI protocol error from rank 3: line longer than 1024 bytes",
      ]);
    }
  });
});

describe("codec fuzz", () => {
  test("parsers either parse or throw PmiCodecError; parsed PMI-1 messages survive a round trip", () => {
    const r = prng(4242);
    const seeds = [...V1_REQUESTS.map((x) => x.split("\n")[0] as string), ...V2_REQUESTS];
    for (let i = 0; i < 5000; i++) {
      const input = mutate(r.pick(seeds), r);
      for (const parse of [parseV1, parseV2]) {
        try {
          const m = parse(input);
          if (parse === parseV1 && !/[\n\0]/.test(input)) {
            const pairs = m.pairs.filter((p): p is [string, string] => p[1] !== undefined && /^[^\s=\\]+$/.test(p[0]));
            let line: string;
            try {
              line = formatV1(m.cmd, pairs);
            } catch (e) {
              expect(e).toBeInstanceOf(PmiCodecError);
              continue;
            }
            const again = parseV1(line.slice(0, -1));
            expect(again.cmd).toBe(m.cmd);
            expect(again.pairs).toEqual(pairs);
          }
        } catch (e) {
          expect(e).toBeInstanceOf(PmiCodecError);
        }
      }
    }
  });

  test("spawn blocks: parse or PmiCodecError", () => {
    const r = prng(5);
    const base = V1_REQUESTS[V1_REQUESTS.length - 1] as string;
    for (let i = 0; i < 2000; i++) {
      const lines = mutate(base, r).split("\n");
      try {
        const req = parseMcmdSpawn(lines);
        expect(req.commands.length).toBeGreaterThan(0);
      } catch (e) {
        expect(e).toBeInstanceOf(PmiCodecError);
      }
    }
  });
});
