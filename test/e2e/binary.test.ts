/**
 * A node with nothing but the compiled binary: ebb built into a directory of its own and run with
 * PATH=/usr/bin:/bin (no bun, no node, no checkout), from a working directory outside the repo
 * that holds copies of the programs. `ebb exec` runs them with ebb/comm and ebb/epop taken from
 * the binary (a decoy `ebb` package beside them is not loaded) while their own node_modules
 * resolve; `bun` in a step is the agent's fallback, the binary's own runtime; and the README's
 * elastic Jacobi (2 -> 4 -> 2) and EPOP Cannon (1 -> 4 -> 1, square grids) resize with the
 * fixed-size answers. `ebb up` started itself again with the controller's purge delay
 * (util/reexec.ts), which its ranks do not get.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildEbb } from "../../scripts/build.ts";
import { DAEMON_PURGE_DELAY, PURGE_DELAY_VAR } from "../../src/util/reexec.ts";
import { ROOT, runProcess, waitFor } from "../support/cluster.ts";
import { holdEnd } from "../support/hold-end.ts";
import { readUntil } from "../support/read-until.ts";

const node = mkdtempSync(join(tmpdir(), "ebb-node-"));
const EBB = join(node, "ebb");
const app = join(node, "app");
const state = join(node, "state");
const PATH = "/usr/bin:/bin";
const env = { PATH, HOME: node, EBB_STATE_DIR: state, EBB_LOG: "warn" };
let up: Subprocess<"ignore", "pipe", "pipe"> | undefined;

const ebb = (args: string[]) => runProcess([EBB, ...args], { cwd: app, env });
const hold = holdEnd(() => node);

beforeAll(async () => {
  // The premise: nothing on this PATH runs a bun of its own.
  expect(Bun.which("bun", { PATH })).toBeNull();
  await buildEbb(EBB);
  // The build leaves the executable only (its source map is inside it): no .map files beside it.
  expect(readdirSync(node)).toEqual(["ebb"]);
  mkdirSync(join(app, "epop"), { recursive: true });
  cpSync(join(ROOT, "examples/jacobi.ts"), join(app, "jacobi.ts"));
  for (const f of ["cannon.ts", "args.ts"]) cpSync(join(ROOT, "examples/epop", f), join(app, "epop", f));
  // The program's own dependency, and a decoy ebb package that must not be the one loaded.
  const pkg = (name: string, files: Record<string, string>) => {
    mkdirSync(join(app, "node_modules", name), { recursive: true });
    for (const [f, text] of Object.entries(files)) writeFileSync(join(app, "node_modules", name, f), text);
  };
  pkg("left-pad-local", { "package.json": JSON.stringify({ name: "left-pad-local", type: "module", main: "index.js" }), "index.js": 'export default (s, n) => s.padStart(n, ".");\n' });
  pkg("ebb", { "package.json": JSON.stringify({ name: "ebb", type: "module", exports: { "./comm": "./decoy.js", "./epop": "./decoy.js" } }), "decoy.js": 'throw new Error("the decoy ebb package was loaded");\n' });
  writeFileSync(
    join(app, "probe.ts"),
    [
      'import { blockLayout } from "ebb/comm";',
      'import { defineProgram } from "ebb/epop";',
      'import pad from "left-pad-local";',
      "const layout = blockLayout(10, 3);",
      "console.log(JSON.stringify({ comm: [0, 1, 2].map((r) => layout.localLength(r)), epop: typeof defineProgram, pad: pad(\"x\", 4), argv: process.argv.slice(1) }));",
      "",
    ].join("\n"),
  );
  up = Bun.spawn([EBB, "up", "--nodes", "4", "--listen", "127.0.0.1:0", "--state-dir", state], { cwd: app, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  await readUntil(up.stdout, "Ctrl-C stops the cluster.");
}, 120_000);

afterAll(async () => {
  if (up) {
    up.kill("SIGINT");
    await up.exited;
  }
  rmSync(node, { recursive: true, force: true });
});

test("ebb exec: ebb/comm and ebb/epop are the binary's, the program's own node_modules resolve, and its argv is as under bun", async () => {
  const want = { comm: [4, 3, 3], epop: "function", pad: "...x", argv: [join(app, "probe.ts"), "a", "--b"] };
  const r = await ebb(["exec", "probe.ts", "a", "--b"]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  expect(JSON.parse(r.stdout)).toEqual(want);
  // bun's command line, as the agents' fallback bun passes it.
  const asBun = await ebb(["exec", "--bun", "--", "run", "probe.ts", "a", "--b"]);
  expect(JSON.parse(asBun.stdout)).toEqual(want);
});

test("ebb exec: a missing program is named; a program's uncaught error ends it with status 1, its message and source lines", async () => {
  const missing = await ebb(["exec", "nosuch.ts"]);
  expect({ code: missing.code, stderr: missing.stderr }).toEqual({ code: 1, stderr: "ebb exec: nosuch.ts: no such file\n" });
  writeFileSync(join(app, "throws.ts"), 'throw new Error("the program failed on purpose");\n');
  const thrown = await ebb(["exec", "throws.ts"]);
  expect(thrown.code).toBe(1);
  expect(thrown.stderr).toContain("error: the program failed on purpose");
  expect(thrown.stderr).toContain(join(app, "throws.ts"));
  // An error inside ebb/comm names its source line: the source map is in the binary.
  writeFileSync(join(app, "misuse.ts"), 'import { blockLayout } from "ebb/comm";\nblockLayout(-1, 2);\n');
  const misuse = await ebb(["exec", "misuse.ts"]);
  expect(misuse.code).toBe(1);
  expect(misuse.stderr).toContain("rows: must be an integer >= 0, got -1");
  expect(misuse.stderr).toMatch(/at \S+ \(src\/comm\/layout\.ts:\d+:\d+\)/);
});

test("bun in a step, on a node without one: the agent's fallback, the binary's runtime (bun's own commands too)", async () => {
  const r = await ebb(["run", "-N", "1", "sh", "-c", "command -v bun; bun --version; bun probe.ts x"]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  const [path, version, probe] = r.stdout.trim().split("\n");
  expect(path).toMatch(/\/fallback\/bun$/);
  expect(version).toBe(Bun.version);
  expect(JSON.parse(probe!).argv).toEqual([join(app, "probe.ts"), "x"]);
});

test("ebb up, the binary: started again with the daemons' purge delay under the pid it was spawned as; a step's rank gets none of it", async () => {
  const environ = readFileSync(`/proc/${up!.pid}/environ`, "utf8").split("\0");
  expect(environ).toContain(`${PURGE_DELAY_VAR}=${DAEMON_PURGE_DELAY}`);
  expect(readFileSync(`/proc/${up!.pid}/cmdline`, "utf8").split("\0").slice(0, 2)).toEqual([EBB, "up"]);
  const r = await ebb(["run", "-n", "1", "env"]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  expect(r.stdout).toContain("EBB_JOB_ID=");
  expect(r.stdout.split("\n").filter((l) => l.startsWith("MIMALLOC_"))).toEqual([]);
});

/** `ebb run ARGS` in the background; resolves once its output matches `ready`, with the job's id. */
async function background(args: string[], ready: RegExp) {
  const run = Bun.spawn([EBB, "run", ...args], { cwd: app, env, stdout: "pipe", stderr: "pipe" });
  let out = "";
  const reading = (async () => {
    const d = new TextDecoder();
    for await (const chunk of run.stdout) out += d.decode(chunk, { stream: true });
  })();
  await waitFor(`${ready}`, () => {
    if (run.exitCode !== null) throw new Error(`ebb run ended early (${run.exitCode}): ${out}`);
    return ready.test(out);
  }, 120_000);
  const jobs = JSON.parse((await ebb(["queue", "--json"])).stdout).jobs;
  return {
    id: String(jobs.at(-1).id),
    finished: async () => ({ code: await run.exited, out: (await reading, out), err: await new Response(run.stderr).text() }),
  };
}

async function resize(id: string, nodes: number) {
  const r = await ebb(["resize", id, "--nodes", String(nodes), "--wait", "--json"]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  expect(JSON.parse(r.stdout).state).toBe("COMMITTED");
}

test("the README's elastic Jacobi with `bun jacobi.ts`, 2 -> 4 -> 2: the fixed-size run's checksum", async () => {
  const iters = ["--iters", "400"];
  const fixed = await ebb(["run", "-N", "1", "bun", "jacobi.ts", ...iters]);
  expect({ code: fixed.code, stderr: fixed.stderr }).toEqual({ code: 0, stderr: "" });
  const want = /checksum=(\w+) heat=(\S+)/.exec(fixed.stdout)?.[0];
  expect(want).toBeDefined();
  // Paced (400 x 15 ms) for both resizes to land mid-run on a quiet machine; held (--hold-end)
  // until they have, however loaded it is.
  const job = await background(["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", "bun", "jacobi.ts", ...iters, "--sleep", "15", "--every", "20", ...hold.args()], /on 2 ranks/);
  await resize(job.id, 4);
  await resize(job.id, 2);
  hold.release();
  const { code, out, err } = await job.finished();
  expect({ code, err }).toEqual({ code: 0, err: "" });
  expect(out).toContain("now 4 ranks (was 2)");
  expect(out).toContain("now 2 ranks (was 4)");
  expect(out).toContain(want!);
}, 240_000);

test("EPOP Cannon with `bun epop/cannon.ts`, 1 -> 4 -> 1: equal to the serial product", async () => {
  // Paced (1000 x 20 ms) until both resizes have landed (EBB_TEST_PACE, epop/args.ts), then at full speed.
  const gate = join(node, "cannon-pace");
  const job = await background(["-N", "1", "--elastic", "--min-nodes", "1", "--max-nodes", "4", "--sizes", "square", "--export", `ALL,EBB_TEST_PACE=${gate}`, "bun", "epop/cannon.ts", "--n", "30", "--iters", "1000", "--sleep", "20"], /cannon: started/);
  await resize(job.id, 4);
  await resize(job.id, 1);
  writeFileSync(gate, "");
  const { code, out, err } = await job.finished();
  expect({ code, err }).toEqual({ code: 0, err: "" });
  expect(out).toContain("now 4 ranks (2x2, was 1)");
  expect(out).toContain("now 1 ranks (1x1, was 4)");
  expect(out).toContain("cannon: check ok");
}, 240_000);

test("ebb sim --threads 2, the binary: its replays run on the replay threads it carries, and agree with one thread", async () => {
  const swf = join(app, "tiny.swf");
  writeFileSync(swf, Array.from({ length: 40 }, (_, i) => `${i + 1} ${i * 30} 0 ${200 + ((i * 37) % 400)} ${1 + (i % 6)} -1 -1 ${1 + (i % 6)} 900 -1 1 1 1 -1 1 -1 -1 -1\n`).join(""));
  const sim = async (threads: string) => {
    const r = await ebb(["sim", "--swf", swf, "--nodes", "8", "--policy", "easy,ebb", "--seeds", "1-2", "--json", "--threads", threads]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    return (JSON.parse(r.stdout) as { results: { policy: string; mean: unknown }[] }).results.map((x) => [x.policy, x.mean]);
  };
  expect(await sim("2")).toEqual(await sim("1"));
}, 120_000);
