/**
 * A root agent acting for a user: nothing the user controls reaches a process that runs as root.
 * Two real users (useradd), a cluster whose agent runs as root, and the attacks of a user who
 * wants root or the other user's files: the loader's variables (LD_PRELOAD, LD_LIBRARY_PATH,
 * LD_AUDIT, LD_DEBUG_OUTPUT, GCONV_PATH), a shell's start-up files (BASH_ENV, ENV), output and
 * error paths into root-only directories, a symlink planted at the output path, a working
 * directory the user cannot enter, the node-shared files of a step, and the job's own cgroup
 * files. The list of what the agent does as root, and why each is safe, is src/roles/agent/README.md.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster, type TestCluster } from "../support/cluster.ts";
import { ensureUser } from "../support/users.ts";

const USERS = ["ebbt_alice", "ebbt_bob"] as const;
const ENDED = ["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED", "TIMEOUT"];
let c: TestCluster;
let base: string;
/** Root's own directory (0700): nothing a job does may create or change anything in it. */
let rootOnly: string;
/** Where the attack's code writes who it ran as (1777, like /tmp). */
let marks: string;
let evilLib: string;
const tokens: Record<string, string> = {};
const uid: Record<string, number> = {};


/** A library whose constructor (and whose audit hook, as LD_AUDIT) writes the ids it runs with. */
const EVIL = `
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void mark(const char *how) {
  const char *dir = getenv("EBBT_MARKS");
  char path[4096];
  snprintf(path, sizeof path, "%s/lib-%d", dir ? dir : "/tmp", (int)getpid());
  FILE *f = fopen(path, "a");
  if (f) { fprintf(f, "%s uid=%d euid=%d\\n", how, (int)getuid(), (int)geteuid()); fclose(f); }
}
__attribute__((constructor)) static void init(void) { mark("constructor"); }
unsigned int la_version(unsigned int v) { mark("audit"); return v; }
`;

beforeAll(async () => {
  expect(process.getuid!()).toBe(0); // the agent must run as root for the attacks to mean anything
  for (const u of USERS) uid[u] = ensureUser(u);
  base = mkdtempSync(join(tmpdir(), "ebb-root-attacks-"));
  chmodSync(base, 0o755);
  for (const u of USERS) {
    mkdirSync(join(base, u), { mode: 0o700 });
    chownSync(join(base, u), uid[u]!, uid[u]!);
  }
  rootOnly = join(base, "root-only");
  mkdirSync(rootOnly, { mode: 0o700 });
  writeFileSync(join(rootOnly, "target"), "root's\n", { mode: 0o644 });
  marks = join(base, "marks");
  mkdirSync(marks);
  chmodSync(marks, 0o1777);
  const src = join(base, "evil.c");
  evilLib = join(base, "evil.so");
  writeFileSync(src, EVIL);
  const cc = Bun.spawnSync(["cc", "-shared", "-fPIC", "-o", evilLib, src], { stderr: "pipe" });
  if (cc.exitCode !== 0) throw new Error(`cc: ${cc.stderr.toString()}`);
  chmodSync(evilLib, 0o755);
  // Where LD_LIBRARY_PATH and GCONV_PATH point: setpriv's own library, and an iconv module list.
  mkdirSync(join(base, "lib"));
  Bun.spawnSync(["cp", evilLib, join(base, "lib", "libcap-ng.so.0")]);
  writeFileSync(join(base, "lib", "gconv-modules"), "module EVIL// INTERNAL evil 1\n");
  writeFileSync(join(base, "evil.sh"), `echo "startup uid=$(id -u) euid=$(id -u)" >> ${marks}/sh-$$\n`, { mode: 0o755 });
  c = await startCluster({ agents: 1 });
  for (const u of USERS) {
    const r = await c.ebb(["token", "create", "--user", u]);
    expect(r.code).toBe(0);
    tokens[u] = r.stdout.trim();
  }
});
afterAll(async () => {
  await c?.stop();
  if (base) rmSync(base, { recursive: true, force: true });
});

const submitAs = (user: string, body: Record<string, unknown>) => c.submit({ cwd: join(base, user), ...body }, tokens[user]!);

async function endOf(id: number): Promise<{ state: string; reason: string | null }> {
  const end = await c.waitJob(id, ENDED, 60_000);
  return { state: end.state, reason: end.reason ?? null };
}

/** Every line the attack's code wrote, and the owners of every file it left. */
function marked(): { lines: string[]; owners: number[] } {
  const lines: string[] = [];
  const owners: number[] = [];
  for (const name of readdirSync(marks)) {
    const path = join(marks, name);
    owners.push(statSync(path).uid);
    lines.push(...readFileSync(path, "utf8").trim().split("\n").filter(Boolean).map((l) => `${name}: ${l}`));
  }
  return { lines, owners };
}

const clearMarks = () => {
  for (const name of readdirSync(marks)) rmSync(join(marks, name), { force: true });
};

/** The environment of a user who wants the loader of a root process to run their code. */
const loaderAttack = () => ({
  EBBT_MARKS: marks,
  LD_PRELOAD: evilLib,
  LD_AUDIT: evilLib,
  LD_LIBRARY_PATH: join(base, "lib"),
  GCONV_PATH: join(base, "lib"),
  LD_DEBUG: "files",
  LD_DEBUG_OUTPUT: join(marks, "ld-debug"),
  BASH_ENV: join(base, "evil.sh"),
  ENV: join(base, "evil.sh"),
});

/** Nothing ran as root; the attack's code ran (as the user), so the test would have seen root. */
function expectOnlyUser(user: string, expectLines: RegExp): void {
  const { lines, owners } = marked();
  expect(lines.filter((l) => /uid=0\b|euid=0\b/.test(l))).toEqual([]);
  expect(owners.filter((o) => o !== uid[user])).toEqual([]);
  // The loader's debug log of a root process would name setpriv.
  expect(lines.filter((l) => l.includes("setpriv"))).toEqual([]);
  expect(lines.some((l) => expectLines.test(l))).toBe(true);
}

test("a command job's LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH, LD_DEBUG_OUTPUT and GCONV_PATH reach only processes of its user", async () => {
  clearMarks();
  const id = await submitAs("ebbt_alice", { argv: ["/bin/true"], env: loaderAttack(), output: "cmd-loader.txt" });
  expect(await endOf(id)).toEqual({ state: "COMPLETED", reason: null });
  expectOnlyUser("ebbt_alice", new RegExp(`constructor uid=${uid.ebbt_alice} euid=${uid.ebbt_alice}`));
});

test("a batch script's environment (LD_*, BASH_ENV, ENV) and its ebb run step reach only processes of its user", async () => {
  clearMarks();
  const script = "#!/bin/bash\nid -un\nebb run -n 1 /bin/true\necho step=$?\n";
  const id = await submitAs("ebbt_bob", { script, env: { ...loaderAttack(), PATH: process.env.PATH ?? "/usr/bin:/bin" }, output: "batch-loader.txt" });
  const end = await endOf(id);
  const out = readFileSync(join(base, "ebbt_bob", "batch-loader.txt"), "utf8");
  expect({ ...end, out }).toEqual({ state: "COMPLETED", reason: null, out: expect.stringContaining("step=0") });
  expect(out).toStartWith("ebbt_bob\n");
  expectOnlyUser("ebbt_bob", new RegExp(`startup uid=${uid.ebbt_bob}`));
});

test("output and error paths into a root-only directory fail the job and create nothing there", async () => {
  const before = readdirSync(rootOnly).sort();
  for (const body of [
    { argv: ["echo", "x"], output: join(rootOnly, "poc-%j.out") },
    { argv: ["echo", "x"], output: "ok-%j.out", error: join(rootOnly, "poc-%j.err") },
    { script: "#!/bin/sh\necho x\n", output: join(rootOnly, "poc-%j.out") },
    { script: "#!/bin/sh\necho x\n", output: "ok-%j.out", error: join(rootOnly, "poc-%j.err") },
  ]) {
    const end = await endOf(await submitAs("ebbt_alice", body));
    // Opened by a process of hers after the drop (output-after-drop.ts): her shell says why not.
    expect({ body, ...end }).toEqual({ body, state: "FAILED", reason: expect.stringMatching(/cannot create \S*poc-\d+\.(out|err): Permission denied/) });
  }
  expect(readdirSync(rootOnly).sort()).toEqual(before);
});

test("a command job's output file is created by its user, not by root", async () => {
  const id = await submitAs("ebbt_alice", { argv: ["echo", "mine"], output: "owned-%j.out" });
  expect((await endOf(id)).state).toBe("COMPLETED");
  const path = join(base, "ebbt_alice", `owned-${id}.out`);
  expect(readFileSync(path, "utf8")).toBe("mine\n");
  expect(statSync(path).uid).toBe(uid.ebbt_alice!);
});

test("a symlink planted at the output path reaches only what the user may write", async () => {
  const dir = join(base, "ebbt_alice");
  const bobsFile = join(base, "ebbt_bob", "bobs.txt");
  writeFileSync(bobsFile, "bob's\n");
  chownSync(bobsFile, uid.ebbt_bob!, uid.ebbt_bob!);
  for (const [name, target] of [["to-root", join(rootOnly, "target")], ["to-bob", bobsFile]] as const) {
    for (const kind of ["argv", "script"] as const) {
      const link = join(dir, `${name}-${kind}.out`);
      rmSync(link, { force: true });
      symlinkSync(target, link);
      const body = kind === "argv" ? { argv: ["echo", "pwned"] } : { script: "#!/bin/sh\necho pwned\n" };
      const end = await endOf(await submitAs("ebbt_alice", { ...body, output: link }));
      expect({ link, ...end }).toEqual({ link, state: "FAILED", reason: expect.stringContaining(`cannot create ${link}: Permission denied`) });
    }
  }
  expect(readFileSync(join(rootOnly, "target"), "utf8")).toBe("root's\n");
  expect(readFileSync(bobsFile, "utf8")).toBe("bob's\n");
});

test("a working directory the user cannot enter fails the job before its program runs", async () => {
  clearMarks();
  const probe = `echo "ran uid=$(id -u)" >> ${marks}/cwd-$$`;
  for (const body of [{ argv: ["/bin/sh", "-c", probe] }, { script: `#!/bin/sh\n${probe}\n` }]) {
    const r = await c.api("POST", "/v1/jobs", { ...body, cwd: rootOnly, output: join(base, "ebbt_alice", "cwd-%j.out") }, tokens.ebbt_alice!);
    expect(r.status).toBe(201);
    const end = await endOf(r.json.id);
    expect({ body, state: end.state }).toEqual({ body, state: "FAILED" });
  }
  expect(marked().lines).toEqual([]);
  expect(readdirSync(rootOnly)).toEqual(["target"]);
});

test("a step's node-shared files (CFG directory, probe slots) belong to the job's user", async () => {
  const show = 'stat -c "%U %a" "$(dirname "$EBB_CFG_FILE")"; if [ -n "$EBB_ADAPT_SHM" ]; then stat -c "%U %a" "$EBB_ADAPT_SHM"; fi';
  const plain = await submitAs("ebbt_bob", { argv: ["/bin/sh", "-c", show], output: "shm-plain.txt" });
  expect((await endOf(plain)).state).toBe("COMPLETED");
  expect(readFileSync(join(base, "ebbt_bob", "shm-plain.txt"), "utf8").trim()).toBe("ebbt_bob 700");
  const elastic = await submitAs("ebbt_bob", { argv: ["/bin/sh", "-c", show], output: "shm-elastic.txt", elastic: true, minNodes: 1, maxNodes: 1 });
  expect((await endOf(elastic)).state).toBe("COMPLETED");
  expect(readFileSync(join(base, "ebbt_bob", "shm-elastic.txt"), "utf8").trim().split("\n")).toEqual(["ebbt_bob 700", "ebbt_bob 600"]);
});

test("a job cannot raise its own limits or leave its cgroups: every file of the agent's cgroups is root's", async () => {
  // The agent's cgroup directories that hold this job (v2, and v1's memory and cpuset where used), found from inside.
  const script = `#!/bin/sh
me=$(grep -o 'ebb-agent-[^/]*/job-[0-9]*' /proc/self/cgroup | head -1)
n=0
for f in $(find /sys/fs/cgroup -path "*/\${me%/job-*}/*" -type f 2>/dev/null); do
  n=$((n+1))
  [ -w "$f" ] && echo "writable $f"
done
limits=$(find /sys/fs/cgroup -path "*/$me/*" -name memory.max -o -path "*/$me/*" -name memory.limit_in_bytes -o -path "*/$me/*" -name cpuset.cpus 2>/dev/null | wc -l)
echo "$me files=$n limits=$limits"
`;
  const id = await submitAs("ebbt_alice", { script, output: "cgroup-files.txt" });
  expect({ ...(await endOf(id)), out: readFileSync(join(base, "ebbt_alice", "cgroup-files.txt"), "utf8") }).toMatchObject({ state: "COMPLETED" });
  const out = readFileSync(join(base, "ebbt_alice", "cgroup-files.txt"), "utf8").trim();
  // No file is writable by the job's user, and there were files to look at, its limits among them.
  expect(out).toMatch(new RegExp(`^ebb-agent-node01-\\d+/job-${id} files=\\d+ limits=[1-9]\\d*$`));
  expect(Number(/files=(\d+)/.exec(out)![1])).toBeGreaterThan(10);
});

test("variables the post-drop shell keeps for itself (UID, OPTIND) still reach the program", async () => {
  const id = await submitAs("ebbt_alice", { argv: ["/usr/bin/env"], env: { OPTIND: "x", UID: "5", PLAIN: "it's \"quoted\" $HOME `id`\nline 2" }, output: "special.txt" });
  expect((await endOf(id)).state).toBe("COMPLETED");
  const out = readFileSync(join(base, "ebbt_alice", "special.txt"), "utf8");
  expect(out).toContain("\nOPTIND=x\n");
  expect(out).toContain("\nUID=5\n");
  expect(out).toContain("\nPLAIN=it's \"quoted\" $HOME `id`\nline 2\n");
  expect(out).toContain("\nUSER=ebbt_alice\n");
});
