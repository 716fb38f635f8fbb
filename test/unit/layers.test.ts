/**
 * The layer rules hold for every import of every file under src/ (../shared/ARCHITECTURE.md,
 * "Layers": imports point down only; each folder's README says what it must not import). The
 * table below is each folder's allowed imports, with the words they come from; an import outside
 * it, a folder without a rule, or a pure folder reaching for `node:` fails with the file and line.
 * Some areas open a layer to a few files only (`edge`): the controller's HTTP edge alone uses `api/`.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const SRC = join(import.meta.dir, "../../src");

/** The layers below `roles/` that a role may use ("everything below"). */
const BELOW_ROLES = ["api", "sched", "model", "cfg", "pmi", "comm", "epop", "tbon", "proto", "store", "domain", "util", "c"];

/**
 * The controller's HTTP edge: the files that build the API (its backend, the server) and the API's
 * response bodies (views). The rest of roles/controller/ speaks in domain/ and proto/ terms.
 */
const CONTROLLER_EDGE = ["index.ts", "server.ts", "views.ts", "plan-views.ts", "timeline.ts", "timeline-feed.ts", "partition-views.ts"].map((f) => `roles/controller/${f}`);

/**
 * Each area (a folder under src/, each role under roles/ on its own) and what it may import: whole
 * areas, or single files named by their path under src/. Its own area is always allowed. `edge`:
 * files of the area that may import more (`may`) than the rest of it.
 */
const RULES: Record<string, { may: readonly string[]; words: string; edge?: { files: readonly string[]; may: readonly string[]; words: string } }> = {
  "main.ts": { may: ["cli", "util"], words: "ARCHITECTURE: one executable, `ebb`, plays every role, chosen by subcommand (cli/)" },
  cli: {
    may: ["roles", "roles/agent", "roles/controller", "roles/launcher", "roles/remote", "sim", ...BELOW_ROLES],
    words: "ARCHITECTURE: cli/ is the top layer (imports point down only); cli/README: Nothing imports `cli/`",
  },
  roles: { may: BELOW_ROLES, words: "roles/README: Imports: everything below (`api/`, `sched/`, `tbon/`, `proto/`, `store/`, `util/`)" },
  "roles/controller": {
    may: ["roles", ...BELOW_ROLES.filter((a) => a !== "api")],
    words: "roles/README: Imports: everything below but `api/`, which only the controller's HTTP edge uses. Roles never import each other's internals",
    edge: { files: CONTROLLER_EDGE, may: ["api"], words: "roles/README: the HTTP edge (index.ts builds the API's backend, server.ts, the views) is the controller's only user of `api/`" },
  },
  "roles/launcher": { may: ["roles", ...BELOW_ROLES], words: "roles/README: Imports: everything below. Roles never import each other's internals" },
  "roles/remote": { may: ["roles", ...BELOW_ROLES], words: "roles/README: Imports: everything below. Roles never import each other's internals" },
  "roles/agent": {
    may: ["roles", "roles/launcher/index.ts", ...BELOW_ROLES],
    words: "roles/README: Roles never import each other's internals: agents host a command job's step root through the launcher's public entry, `launcher/index.ts`",
  },
  api: { may: BELOW_ROLES.filter((a) => a !== "api"), words: "ARCHITECTURE: api/ is below roles/ and above sched/; api/README: Must not import `roles/`" },
  sched: { may: ["model", "domain", "util"], words: "sched/README: Must not import from `roles/`, `api/`, `store/`, `sim/`, `node:*` ...; may import `model/` and zod" },
  model: { may: ["domain", "util", "cfg/nest.ts"], words: "model/README: Pure functions ... nothing from `roles/`, `sched/` or `sim/` (`cfg/nest.ts` gives the efficiency line the loops' nesting forest)" },
  cfg: { may: ["util"], words: "cfg/README: Imports nothing but `cfg/` itself (and `util/` if needed)" },
  pmi: { may: ["util"], words: "pmi/README, Must not import: Only `src/util/`, `zod` and `node:` modules" },
  comm: {
    may: ["cfg", "util", "pmi/client.ts", "proto/adapt.ts"],
    words: "comm/README: only the adaptation window talks to the agent, with the PMI client (`pmi/client.ts`) and the contract in `proto/adapt.ts`; it uses `util/` and `cfg/`",
  },
  epop: { may: ["comm", "domain", "util"], words: "ARCHITECTURE: epop/ phase-oriented programs and their driver, written on comm/ (epop/README: runEpop drives the adaptation window)" },
  tbon: { may: ["proto", "store", "domain", "util"], words: "ARCHITECTURE: tbon/ is above proto/ and store/; tbon/README: Must not import `roles/`" },
  proto: { may: ["domain", "util"], words: "ARCHITECTURE: proto/ is above store/, domain/, util/; proto/README: Must not import `roles/`, `store/` or `api/`" },
  store: { may: ["domain", "util"], words: "store/README: Must not import anything above it" },
  sim: { may: ["sched", "model", "domain", "util"], words: "sim/README: Must not import from `roles/`, `api/`, `store/`; may import `sched/` and `model/`" },
  domain: { may: [], words: "domain/README: Imports nothing of ebb's" },
  util: { may: [], words: "util/README: Imports nothing from the rest of `src/`" },
  c: { may: [], words: "c/README: C sources only (libebb), which roles/ compile; nothing here imports anything" },
};

/** Folders whose README forbids I/O: no `node:` or `bun:` modules. */
const PURE = new Set(["sched", "model"]);

/** The area of a path under src/: its first folder, a role under roles/ on its own. */
function areaOf(path: string): string {
  const parts = path.split("/");
  if (parts.length === 1) return parts[0]!;
  if (parts[0] === "roles" && parts.length > 2) return `roles/${parts[1]}`;
  return parts[0]!;
}

interface Import {
  /** Path under src/ of the importing file. */
  file: string;
  line: number;
  spec: string;
}

/** Every module specifier a file's code names: static imports and re-exports (type-only too), side-effect and dynamic imports. */
function importsOf(file: string, text: string): Import[] {
  // Doc and line comments at the start of a line hold example imports, not imports.
  const code = text.replace(/^[ \t]*\/\*[\s\S]*?\*\//gm, (c) => c.replace(/[^\n]/g, " ")).replace(/^[ \t]*\/\/.*$/gm, "");
  const out: Import[] = [];
  const patterns = [/^[ \t]*(?:import|export)\s+(?:type\s+)?[^;()=]*?\bfrom\s*["']([^"']+)["']/gm, /^[ \t]*import\s*["']([^"']+)["']/gm, /\bimport\(\s*["']([^"']+)["']\s*\)/g];
  for (const re of patterns) {
    for (const m of code.matchAll(re)) out.push({ file, line: code.slice(0, m.index).split("\n").length, spec: m[1]! });
  }
  return out;
}

/** What is wrong with one import, or undefined. */
function breaks(imp: Import): string | undefined {
  const from = areaOf(imp.file);
  const rule = RULES[from];
  if (!rule) return `${imp.file}: no layer rule for ${from}/ (add it to test/unit/layers.test.ts with its README's words)`;
  if (!imp.spec.startsWith(".")) {
    if (PURE.has(from) && /^(node|bun):/.test(imp.spec)) return `${imp.file}:${imp.line} imports ${imp.spec}: ${from}/ is pure (${rule.words})`;
    return undefined;
  }
  const target = normalize(join(dirname(imp.file), imp.spec));
  if (target.startsWith("..")) return undefined; // outside src/ (migrations, package.json)
  const to = areaOf(target);
  if (to === from || rule.may.includes(to) || rule.may.includes(target)) return undefined;
  if (rule.edge?.files.includes(imp.file) && rule.edge.may.includes(to)) return undefined;
  const edge = rule.edge?.may.includes(to) ? `; only ${rule.edge.files.join(", ")} may import ${to}/ (${rule.edge.words})` : "";
  return `${imp.file}:${imp.line} imports ${target}: ${from}/ may import ${rule.may.join(", ") || "nothing of ebb's"} (${rule.words})${edge}`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : []));
}

describe("layer rules", () => {
  const imports = sourceFiles(SRC).flatMap((f) => importsOf(relative(SRC, f), readFileSync(f, "utf8")));

  test("every import of src/ points down, or sideways only where a README allows it", () => {
    // The scan sees the code: hundreds of imports, across every area.
    expect(imports.length).toBeGreaterThan(500);
    expect(new Set(imports.map((i) => areaOf(i.file))).size).toBeGreaterThan(15);
    expect(imports.map(breaks).filter((b) => b !== undefined)).toEqual([]);
  });

  test("an upward or sideways import, or I/O in a pure folder, is named with its rule", () => {
    const bad = [
      ...importsOf("store/schema.ts", 'import type { JobOverrides } from "../sched/config.ts";'),
      ...importsOf("roles/agent/jobs.ts", 'import {\n  Launch,\n} from "../launcher/launch.ts";'),
      ...importsOf("sched/remap.ts", '/** x */\nexport { processMapping } from "../pmi/mapping.ts";'),
      ...importsOf("sched/x.ts", 'import { readFileSync } from "node:fs";'),
      ...importsOf("util/x.ts", 'const m = await import("../sched/plan.ts");'),
      ...importsOf("newfolder/x.ts", 'import "../util/log.ts";'),
      ...importsOf("roles/controller/jobs.ts", 'import type { JobSubmit } from "../../api/schemas.ts";'),
    ];
    expect(bad.map(breaks)).toEqual([
      "store/schema.ts:1 imports sched/config.ts: store/ may import domain, util (store/README: Must not import anything above it)",
      expect.stringContaining("roles/agent/jobs.ts:1 imports roles/launcher/launch.ts: roles/agent/ may import roles, roles/launcher/index.ts"),
      expect.stringContaining("sched/remap.ts:2 imports pmi/mapping.ts: sched/ may import model, domain, util"),
      expect.stringContaining("sched/x.ts:1 imports node:fs: sched/ is pure"),
      "util/x.ts:1 imports sched/plan.ts: util/ may import nothing of ebb's (util/README: Imports nothing from the rest of `src/`)",
      expect.stringContaining("newfolder/x.ts: no layer rule for newfolder/"),
      expect.stringContaining("roles/controller/jobs.ts:1 imports api/schemas.ts: roles/controller/ may import roles, sched,"),
    ]);
    expect(breaks(importsOf("roles/controller/jobs.ts", 'import { x } from "../../api/app.ts";')[0]!)).toContain("only roles/controller/index.ts, roles/controller/server.ts");
    const fine = [
      ...importsOf("roles/agent/jobs.ts", 'import { Launch } from "../launcher/index.ts";'),
      ...importsOf("comm/adapt.ts", 'import { PmiClient } from "../pmi/client.ts";'),
      ...importsOf("sched/x.ts", '/**\n * import { x } from "../roles/controller/index.ts";\n */\nimport type { A } from "./types.ts";'),
      ...importsOf("roles/controller/views.ts", 'import type { JobView } from "../../api/schemas.ts";'),
    ];
    expect(fine.map(breaks)).toEqual([undefined, undefined, undefined, undefined]);
  });
});
