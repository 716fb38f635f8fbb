import { describe, expect, test } from "bun:test";
import type { SpawnRequest } from "../../src/pmi/backend.ts";
import { ByteQueue } from "../../src/pmi/bytes.ts";
import { PmiCodecError } from "../../src/pmi/errors.ts";
import { formatMcmdSpawn, mcmdComplete, parseMcmdSpawn } from "../../src/pmi/mcmd.ts";
import { formatV1, parseV1 } from "../../src/pmi/v1.ts";
import { decodeV2Length, formatV2, parseV2, parseV2Spawn } from "../../src/pmi/v2.ts";

describe("PMI-1 lines", () => {
  test("parse keeps order, first key wins, bare keys allowed, extra spaces ignored", () => {
    const m = parseV1("cmd=put  kvsname=kvs_1 key=a value=1 value=2 flag");
    expect(m.cmd).toBe("put");
    expect(m.pairs).toEqual([
      ["kvsname", "kvs_1"],
      ["key", "a"],
      ["value", "1"],
      ["value", "2"],
      ["flag", undefined],
    ]);
    expect(m.get("value")).toBe("1");
    expect(m.args()).toEqual({ kvsname: "kvs_1", key: "a", value: "1" });
  });

  test("backslash escapes the next character; a trailing backslash stays", () => {
    expect(parseV1("cmd=put value=a\\ b\\\\c\\=d").get("value")).toBe("a b\\c=d");
    expect(parseV1("cmd=put value=end\\").get("value")).toBe("end\\");
  });

  test("round trip of awkward values", () => {
    for (const v of ["", "plain", "two words", "back\\slash", " lead", "trail ", "a=b=c", "ünïcode ✓", "\\ \\\\"]) {
      const line = formatV1("get_result", [["rc", 0], ["value", v]]);
      expect(line.endsWith("\n")).toBe(true);
      expect(parseV1(line.slice(0, -1)).get("value")).toBe(v);
    }
  });

  test("malformed lines are rejected; the command name is kept when it was readable", () => {
    const err = (line: string) => {
      try {
        parseV1(line);
      } catch (e) {
        expect(e).toBeInstanceOf(PmiCodecError);
        return [(e as PmiCodecError).message, (e as PmiCodecError).cmd];
      }
      throw new Error(`accepted ${line}`);
    };
    expect(err("put key=a")).toEqual(['PMI-1 line does not start with cmd=: "put key=a"', undefined]);
    expect(err("cmd= key=a")[1]).toBeUndefined();
    expect(err("cmd=get\0")[0]).toBe("NUL byte in PMI-1 line");
    expect(err("cmd=put =x")).toEqual(["expected a key at column 9", "put"]);
    expect(err(`cmd=${"x".repeat(65)}`)[1]).toBeUndefined();
  });

  test("format refuses what cannot be carried", () => {
    expect(() => formatV1("get_result", [["value", "a\nb"]])).toThrow("contains a newline");
    expect(() => formatV1("get_result", [["bad key", "x"]])).toThrow("invalid key");
    expect(() => formatV1("get_result", [["value", "x".repeat(1010)]])).toThrow("longer than 1024 bytes");
    expect(formatV1("get_result", [["value", "x".repeat(1000)]])).toHaveLength(1000 + "cmd=get_result value=\n".length);
  });
});

describe("line framing", () => {
  test("1024 bytes including the newline is the limit, counted in bytes", () => {
    const q = new ByteQueue();
    q.push(`${"a".repeat(1023)}\n`);
    expect(q.takeLine(1024)).toHaveLength(1023);
    q.push("é".repeat(512)); // 1024 bytes, no newline yet
    expect(() => q.takeLine(1024)).toThrow("line longer than 1024 bytes");
  });

  test("partial lines wait for the rest", () => {
    const q = new ByteQueue();
    q.push("cmd=ge");
    expect(q.takeLine(1024)).toBeUndefined();
    q.push(new TextEncoder().encode("t_maxes\ncmd="));
    expect(q.takeLine(1024)).toBe("cmd=get_maxes");
    expect(q.takeLine(1024)).toBeUndefined();
    expect(q.length).toBe(4);
  });
});

describe("PMI-2 frames", () => {
  test("length field: right-aligned (MPICH), left-aligned (Slurm, MPICH 4.0 simple PMI-2)", () => {
    expect(decodeV2Length("    42")).toBe(42);
    expect(decodeV2Length("42    ")).toBe(42);
    expect(decodeV2Length("000042")).toBe(42);
    for (const bad of ["abcdef", "  -1  ", "      ", "4 2   ", "000000", "999999"]) expect(() => decodeV2Length(bad)).toThrow(PmiCodecError);
  });

  test("format: %6u length of the UTF-8 payload, `;` escaped as `;;`", () => {
    expect(formatV2("kvs-get-response", [["found", "TRUE"], ["value", "a;b"], ["rc", 0]])).toBe("    48cmd=kvs-get-response;found=TRUE;value=a;;b;rc=0;");
    const f = formatV2("x", [["v", "é"]]);
    expect(Number(f.slice(0, 6))).toBe(new TextEncoder().encode(f.slice(6)).length);
  });

  test("parse: `;;` unescapes, the trailing `;` is optional, bare keys allowed", () => {
    const m = parseV2("cmd=kvs-put;key=k;value=a;;b;;;flag;last=1");
    expect(m.cmd).toBe("kvs-put");
    expect(m.pairs).toEqual([
      ["key", "k"],
      ["value", "a;b;"],
      ["flag", undefined],
      ["last", "1"],
    ]);
  });

  test("round trip", () => {
    for (const v of ["", "a;b", ";;", "x=y", "sp ace", ";"]) {
      const f = formatV2("r", [["value", v], ["rc", 0]]);
      expect(parseV2(f.slice(6)).get("value")).toBe(v);
    }
  });

  test("malformed payloads", () => {
    expect(() => parseV2("key=v;")).toThrow("does not start with cmd=");
    expect(() => parseV2("cmd=;")).toThrow("invalid command name");
    expect(() => parseV2("cmd=x;=v;")).toThrow("empty key");
    try {
      parseV2("cmd=kvs-put;=v;");
    } catch (e) {
      expect((e as PmiCodecError).cmd).toBe("kvs-put");
    }
  });

  test("spawn", () => {
    const m = parseV2(
      "cmd=spawn;ncmds=2;preputcount=1;ppkey0=k;ppval0=v;subcmd=a;maxprocs=1;argc=1;argv0=x;subcmd=b;maxprocs=2;argc=0;infokeycount=1;infokey0=host;infoval0=n1;",
    );
    expect(parseV2Spawn(m)).toEqual({
      commands: [
        { execname: "a", args: ["x"], maxprocs: 1, info: {} },
        { execname: "b", args: [], maxprocs: 2, info: { host: "n1" } },
      ],
      preput: { k: "v" },
    });
    expect(() => parseV2Spawn(parseV2("cmd=spawn;ncmds=1;subcmd=a;maxprocs=99999;"))).toThrow("maxprocs=99999 is too large");
  });
});

describe("mcmd spawn blocks", () => {
  const req: SpawnRequest = {
    commands: [
      { execname: "/bin/worker", args: ["a b", "--x=1", "back\\slash"], maxprocs: 2, info: { wdir: "/tmp", path: "/opt" } },
      { execname: "./other", args: [], maxprocs: 1, info: {} },
    ],
    preput: { PARENT_ROOT_PORT_NAME: "tag#0$p$", extra: "v" },
  };

  test("format/parse round trip (newer MPICH layout: preput in the first block only)", () => {
    const text = formatMcmdSpawn(req);
    const lines = text.slice(0, -1).split("\n");
    expect(mcmdComplete(lines)).toBe(true);
    expect(mcmdComplete(lines.slice(0, lines.indexOf("endcmd") + 1))).toBe(false);
    expect(parseMcmdSpawn(lines)).toEqual(req);
  });

  test("values are the rest of the line, verbatim", () => {
    const lines = "mcmd=spawn\nnprocs=1\nexecname=./a\ntotspawns=1\nspawnssofar=1\narg1=x=y \\n z\nargcnt=1\ninfonum=0\nendcmd".split("\n");
    expect(parseMcmdSpawn(lines).commands[0]?.args).toEqual(["x=y \\n z"]);
  });

  test("keys from the wire never touch prototypes", () => {
    const lines = "mcmd=spawn\nnprocs=1\nexecname=./a\ntotspawns=1\nspawnssofar=1\nargcnt=0\npreput_num=1\npreput_key_0=__proto__\npreput_val_0=x\ninfo_num=0\nendcmd".split("\n");
    const r = parseMcmdSpawn(lines);
    expect(Object.keys(r.preput)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(r.preput)).toBe(Object.prototype);
  });

  test("errors", () => {
    const base = "mcmd=spawn\nnprocs=1\nexecname=./a\ntotspawns=1\nspawnssofar=1\n";
    expect(() => parseMcmdSpawn(`${base}argcnt=x\nendcmd`.split("\n"))).toThrow("argcnt is not a count: x");
    expect(() => parseMcmdSpawn("mcmd=spawn\nexecname=./a\ntotspawns=1\nendcmd".split("\n"))).toThrow("missing nprocs");
    expect(() => parseMcmdSpawn("mcmd=spawn\nnprocs=1\nexecname=a\ntotspawns=2\nendcmd".split("\n"))).toThrow("totspawns=2 but 1 blocks");
    expect(() => parseMcmdSpawn("mcmd=kill\nendcmd".split("\n"))).toThrow("unsupported mcmd=kill");
    expect(() => formatMcmdSpawn({ commands: [{ execname: "a", args: ["x\ny"], maxprocs: 1, info: {} }], preput: {} })).toThrow("newline");
  });
});
