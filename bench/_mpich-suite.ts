/**
 * MPICH's own test suite (its `test/mpi`) under `ebb run` and under Hydra's `mpiexec`, line by line,
 * as MPICH's `runtests` would judge them: not in `npm test` (it takes hours), for a session to rerun.
 *
 *   git --git-dir=/work/.mirror/pmodels+mpich/repo archive v4.0.2 test/mpi | tar x -C DIR
 *   bun bench/_mpich-suite.ts --src DIR/test/mpi --build BUILD --sample init,pt2pt,coll:3,rma:5 \
 *     [--modes ebb1,ebb3,hydra] [--timeout 60] [--out results.jsonl] [--ebb PATH]
 *
 * `--sample dir[:k]`: every k-th line of that directory's testlist (k = 1 when left out); a testlist
 * line that names a directory is followed into it (`errors`). BUILD gets what MPICH's configure
 * would write (prepare()) and each test program, compiled from its `Makefile.am` (its `_SOURCES`
 * and `_CPPFLAGS`) into BUILD/DIR/NAME.
 * Modes: `ebb1` runs on `ebb up --nodes 1 --cpus-per-node 16`, `ebb3` on `--nodes 3
 * --cpus-per-node 4` (`-N min(n,3)`, `--overcommit` past 12 ranks), `hydra` is `mpiexec -n n`; each
 * line runs in every mode, the order turned by one each line. One JSON line a run in --out, and a
 * table of run / passed per directory at the end.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync, appendFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { compiledEbb, startBenchCluster, type BenchCluster } from "./cluster.ts";

const { values: opt } = parseArgs({
  options: {
    src: { type: "string" },
    build: { type: "string" },
    sample: { type: "string", default: "init" },
    modes: { type: "string", default: "ebb1,ebb3,hydra" },
    timeout: { type: "string", default: "60" },
    out: { type: "string", default: "mpich-suite.jsonl" },
    "build-only": { type: "boolean", default: false },
    /** The ebb executable (default: dist/ebb, built if missing). */
    ebb: { type: "string" },
  },
});
if (!opt.src || !opt.build) throw new Error("--src (MPICH's test/mpi) and --build (a directory with include/mpitestconf.h) are needed");
const SRC = opt.src;
const BUILD = opt.build;

interface Line { dir: string; name: string; np: number; args: string[]; mpiexecArgs: string[]; env: Record<string, string>; limit: number; result: string; xfail?: string }

/** A testlist's lines, directories followed; `@x@` lines (configure's) and comments left out. */
function testlist(dir: string): Line[] {
  const file = ["testlist", "testlist.in"].map((f) => join(SRC, dir, f)).find(existsSync);
  if (!file) return [];
  const lines: Line[] = [];
  for (const raw of readFileSync(file, "utf8").split("\n")) {
    const t = raw.replace(/#.*/, "").trim().split(/\s+/).filter(Boolean);
    if (!t.length || t[0]!.includes("@")) continue;
    if (t.length === 1) {
      if (existsSync(join(SRC, dir, t[0]!, "Makefile.am"))) lines.push(...testlist(join(dir, t[0]!)));
      continue;
    }
    const line: Line = { dir, name: t[0]!, np: Number(t[1]), args: [], mpiexecArgs: [], env: {}, limit: Number(opt.timeout), result: "default" };
    for (const kv of t.slice(2)) {
      const [k, v = ""] = [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)];
      if (k === "arg") line.args.push(v);
      else if (k === "mpiexecarg") line.mpiexecArgs.push(v);
      else if (k === "env") line.env[v.slice(0, v.indexOf("="))] = v.slice(v.indexOf("=") + 1);
      else if (k === "timeLimit") line.limit = Math.max(line.limit, Number(v));
      else if (k === "resultTest") line.result = v;
      else if (k === "xfail") line.xfail = v;
    }
    if (Number.isFinite(line.np)) lines.push(line);
  }
  return lines;
}

const MPITESTCONF = `/* hand-written for MPICH 4.0.2 (ch4:ucx), Linux, gcc: what its configure would find */
${["STDARG_H", "STRING_H", "STRINGS_H", "UNISTD_H", "STDINT_H", "SYS_TIME_H", "SYS_RESOURCE_H", "GETRUSAGE", "LONG_DOUBLE", "LONG_LONG", "LONG_LONG_INT", "FLOAT__COMPLEX", "DOUBLE__COMPLEX", "LONG_DOUBLE__COMPLEX", "MPI_WIN_CREATE", "MPI_INIT_THREAD", "MPI_IO", "MPI_TYPE_CREATE_STRUCT", "MPI2_COMBINERS", "FORTRAN_BINDING", "PTHREAD_BARRIER_INIT", "IOSTREAM", "NAMESPACE_STD"].map((h) => `#define HAVE_${h} 1`).join("\n")}
#define USE_LONG_DOUBLE_COMPLEX 1
#define MPI_SIZEOF_AINT 8
#define MPI_SIZEOF_OFFSET 8
#define THREAD_PACKAGE_POSIX 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
`;

/**
 * What MPICH's configure and build write before the tests: mpitestconf.h, mtest_mpix.h (MPICH's
 * binding generator: an MPI_ name for each MPIX_ one that mpi.h has no MPI_ name for), dtpools'
 * conf header, and util/ and dtpools/src/ compiled into BUILD/obj (libmtest.a and the init objects).
 */
function prepare() {
  const o = join(BUILD, "obj");
  if (existsSync(join(o, "libmtest.a"))) return;
  mkdirSync(join(BUILD, "include"), { recursive: true });
  mkdirSync(o, { recursive: true });
  writeFileSync(join(BUILD, "include/mpitestconf.h"), MPITESTCONF);
  const headers = ["mpi.h", "mpio.h"].map((h) => readFileSync(join("/usr/include/x86_64-linux-gnu/mpich", h), "utf8")).join("\n");
  const mpix = [...new Set(headers.match(/\bMPIX_\w+/g))].filter((x) => !new RegExp(`\\b${x.replace("MPIX_", "MPI_")}\\b`).test(headers));
  writeFileSync(join(BUILD, "include/mtest_mpix.h"), mpix.map((x) => `#define ${x.replace("MPIX_", "MPI_")} ${x}\n`).join(""));
  writeFileSync(join(SRC, "dtpools/dtpoolsconf.h"), ["STDLIB_H", "STRING_H", "LIMITS_H", "STDINT_H", "SYS_TYPES_H", "STRDUP", "MEMSET"].map((h) => `#define HAVE_${h} 1\n`).join(""));
  const inc = [`-I${join(BUILD, "include")}`, `-I${join(SRC, "include")}`, `-I${join(SRC, "dtpools/include")}`];
  const cc = (tool: string, file: string, extra: string[] = []) => {
    const p = Bun.spawnSync([tool, "-O1", "-w", ...inc, ...extra, "-c", join(SRC, file), "-o", join(o, file.replace(/.*\//, "").replace(/\.\w+$/, ".o"))], { stderr: "inherit" });
    if (p.exitCode !== 0) throw new Error(`${file} does not compile`);
  };
  const lib = ["util/mtest.c", "util/mtest_common.c", "util/dtypes.c", ...readdirSync(join(SRC, "dtpools/src")).filter((f) => f.endsWith(".c")).map((f) => `dtpools/src/${f}`)];
  for (const f of [...lib, "util/mtest_single.c"]) cc("mpicc", f);
  cc("mpicc", "util/mtest_thread.c", ["-DMTEST_USE_THREAD"]);
  cc("mpicxx", "util/mtest_cxx.cxx");
  cc("mpif90", "util/mtest_f90.f90");
  Bun.spawnSync(["ar", "rcs", join(o, "libmtest.a"), ...lib.map((f) => join(o, f.replace(/.*\//, "").replace(/\.c$/, ".o")))]);
}

/** The program of a line, compiled as its directory's Makefile.am says; undefined if it does not build. */
async function program(line: Line): Promise<string | undefined> {
  const exe = join(BUILD, line.dir, line.name);
  if (existsSync(exe)) return exe;
  if (existsSync(exe + ".failed")) return undefined;
  const am = readFileSync(join(SRC, line.dir, "Makefile.am"), "utf8").replace(/\\\n/g, " ");
  const field = (suffix: string) => new RegExp(`^${line.name}_${suffix}\\s*\\+?=(.*)$`, "m").exec(am)?.[1]?.trim();
  const kind = /Makefile_threads/.test(am) ? "threads" : /Makefile_cxx/.test(am) ? "cxx" : /Makefile_f90/.test(am) ? "f90" : "c";
  const ext = { c: ".c", threads: ".c", cxx: ".cxx", f90: ".f90" }[kind];
  const sources = (field("SOURCES") ?? `${line.name}${ext}`).split(/\s+/).filter((s) => !s.endsWith(".h")).map((s) => join(SRC, line.dir, s));
  const cppflags = (field("CPPFLAGS") ?? "").replace(/\$\(AM_CPPFLAGS\)/g, "").split(/\s+/).filter(Boolean);
  const o = join(BUILD, "obj");
  const libs = {
    c: [join(o, "mtest_single.o"), join(o, "libmtest.a")],
    threads: [join(o, "mtest_thread.o"), join(o, "libmtest.a"), "-lpthread"],
    cxx: [join(o, "mtest_cxx.o"), join(o, "libmtest.a")],
    f90: [join(o, "mtest_f90.o"), join(o, "mtest_single.o"), join(o, "libmtest.a")],
  }[kind];
  const cc = { c: "mpicc", threads: "mpicc", cxx: "mpicxx", f90: "mpif90" }[kind];
  const inc = [`-I${join(BUILD, "include")}`, `-I${join(SRC, "include")}`, `-I${join(SRC, "dtpools/include")}`, `-I${join(SRC, line.dir)}`];
  mkdirSync(dirname(exe), { recursive: true });
  const argv = [cc, "-O1", "-w", ...(kind === "threads" ? ["-DMTEST_USE_THREAD"] : []), ...inc, ...cppflags, ...sources, ...libs, "-lm", "-o", exe];
  const p = Bun.spawnSync(argv, { cwd: dirname(exe), stderr: "pipe", stdout: "pipe" });
  if (p.exitCode === 0) return exe;
  writeFileSync(exe + ".failed", `${argv.join(" ")}\n${p.stderr}`);
  return undefined;
}

/** runtests' judgement: ` No Errors` and nothing else, exit 0 (or the line's resultTest). */
function passed(line: Line, code: number, out: string): boolean {
  const lines = out.split("\n").filter((l) => l.trim() && !/FORTRAN STOP/.test(l));
  // TestStatus wants a nonzero exit and (its loop's /=*/ matches every line) says nothing of the output.
  if (line.result === "TestErrFatal" || line.result === "TestStatus") return code !== 0;
  const clean = lines.every((l) => /^\s*(No [Ee]rrors|Test Passed)\s*$/.test(l)) && lines.some((l) => /^\s*No [Ee]rrors\s*$/.test(l));
  return clean && (line.result === "TestStatusNoErrors" || code === 0);
}

interface Mode { name: string; argv(line: Line, exe: string): string[]; env: Record<string, string> }

async function run(mode: Mode, line: Line, exe: string) {
  const t0 = performance.now();
  const env = { ...mode.env, ...line.env, MPIEXEC_TIMEOUT: String(line.limit) };
  const p = Bun.spawn(mode.argv(line, exe), { cwd: dirname(exe), env, stdout: "pipe", stderr: "pipe" });
  // The launcher's own limit is MPIEXEC_TIMEOUT; this one is for a launcher that ignores it.
  const guard = setTimeout(() => p.kill("SIGKILL"), (line.limit + 60) * 1000);
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  clearTimeout(guard);
  const s = (performance.now() - t0) / 1000;
  return { mode: mode.name, dir: line.dir, name: line.name, np: line.np, args: line.args, code, s: Math.round(s * 10) / 10, pass: passed(line, code, out + err), xfail: line.xfail, tail: passed(line, code, out + err) ? undefined : (out + err).slice(-600) };
}

const lines: Line[] = [];
for (const spec of opt.sample!.split(",")) {
  const [dir, every = "1"] = spec.split(":");
  lines.push(...testlist(dir!).filter((_, i) => i % Number(every) === 0));
}
prepare();
const built: [Line, string][] = [];
for (const line of lines) {
  const exe = await program(line);
  if (exe) built.push([line, exe]);
  else console.error(`not built: ${line.dir}/${line.name} (${join(BUILD, line.dir, line.name)}.failed)`);
}
console.error(`${lines.length} lines, ${built.length} built`);
if (opt["build-only"]) process.exit(0);

const clusters: BenchCluster[] = [];
const ebb = opt.ebb ? [opt.ebb] : existsSync(new URL("../dist/ebb", import.meta.url).pathname) ? [new URL("../dist/ebb", import.meta.url).pathname] : await compiledEbb();
const modes: Mode[] = [];
for (const name of opt.modes!.split(",")) {
  if (name === "hydra") modes.push({ name, env: { ...(process.env as Record<string, string>) }, argv: (l, exe) => ["mpiexec", ...l.mpiexecArgs, "-n", String(l.np), exe, ...l.args] });
  else {
    const nodes = Number(name.replace("ebb", ""));
    const cpus = nodes === 1 ? 16 : 4;
    const c = await startBenchCluster(nodes, { cpusPerNode: cpus, ebb });
    clusters.push(c);
    modes.push({ name, env: c.env, argv: (l, exe) => [...ebb, "run", "-N", String(Math.min(l.np, nodes)), "-n", String(l.np), ...(l.np > nodes * cpus ? ["--overcommit"] : []), exe, ...l.args] });
  }
}
const results: Awaited<ReturnType<typeof run>>[] = [];
try {
  for (const [i, [line, exe]] of built.entries()) {
    for (let k = 0; k < modes.length; k++) {
      const r = await run(modes[(i + k) % modes.length]!, line, exe);
      results.push(r);
      appendFileSync(opt.out!, JSON.stringify(r) + "\n");
      console.error(`${r.pass ? "pass" : "FAIL"} ${r.mode} ${r.dir}/${r.name} -n ${r.np} ${r.args.join(" ")} ${r.s}s code ${r.code}`);
    }
  }
} finally {
  for (const c of clusters) await c.stop();
}
const dirs = [...new Set(results.map((r) => r.dir.split("/")[0]))];
console.log(`| directory | lines | ${modes.map((m) => `${m.name}: run / passed`).join(" | ")} |`);
for (const d of dirs) {
  const of = (m: string) => results.filter((r) => r.dir.split("/")[0] === d && r.mode === m);
  console.log(`| ${d} | ${lines.filter((l) => l.dir.split("/")[0] === d).length} | ${modes.map((m) => `${of(m.name).length} / ${of(m.name).filter((r) => r.pass).length}`).join(" | ")} |`);
}
for (const r of results.filter((r) => !r.pass)) console.log(`fail ${r.mode} ${r.dir}/${r.name} -n ${r.np} ${r.args.join(" ")}: code ${r.code} ${r.s}s`);
