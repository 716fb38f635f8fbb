/**
 * `ebb up --slurm` under a real Slurm (munged, slurmctld and two slurmd, n1 and n2, on loopback):
 * inside `salloc -N 2` and `sbatch -N 2`, agents start on both nodes through srun, an MPICH
 * program and an elastic resize run inside the allocation, and nothing of ebb outlives it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commandLines, ROOT, runProcess, waitFor } from "../support/cluster.ts";
import { LocalSlurm } from "../support/slurm.ts";
import { mpi } from "../mpi/programs.ts";
import { cgroup2Root } from "../../src/roles/agent/containment.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-up-slurm-"));
const EBB = `${process.execPath} --no-env-file ${join(ROOT, "src/main.ts")}`;
let slurm: LocalSlurm;
const hello = await mpi("hello");

/** The cgroups of agents named n1 and n2 (where the host has cgroup v2; the agents run in this process's cgroup). */
function agentCgroups(): string[] {
  const root = cgroup2Root();
  return root ? readdirSync(root).filter((n) => /^ebb-agent-n[12]-\d+$/.test(n)) : [];
}
let earlier = new Set<string>();

/** Nothing of ebb outlives the allocation: no process, and no cgroup of its agents (their sentinels, signalled by Slurm with them, remove those, within their 30 s of retries). */
async function nothingLeft(state: string): Promise<void> {
  await waitFor("nothing of ebb left", () => !commandLines().some((p) => p.cmd.includes(state) || p.cmd.includes("--tied-to-stdin")), 60_000);
  // The sentinels remove them once the agents' processes are gone, retrying for up to 30 s while a killed process is slow to leave.
  const left = () => agentCgroups().filter((n) => !earlier.has(n));
  await waitFor("the agents' cgroups removed", () => left().length === 0, 40_000).catch(() => {});
  expect(left()).toEqual([]);
}

beforeAll(async () => {
  slurm = await new LocalSlurm().start();
  earlier = new Set(agentCgroups());
}, 180_000);
afterAll(async () => {
  await slurm?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A job script: ebb up --slurm in the background, then ebb commands once it is up; it never stops ebb up itself. */
function script(name: string, body: string, upFlags = ""): string {
  const state = join(dir, `state-${name}`);
  const path = join(dir, `${name}.sh`);
  writeFileSync(
    path,
    `#!/bin/sh
export EBB_STATE_DIR=${state} EBB_LOG=warn
${EBB} up --slurm${upFlags} > ${dir}/${name}-up.out 2> ${dir}/${name}-up.err &
i=0
until grep -q "ebb cluster is up" ${dir}/${name}-up.out 2>/dev/null; do
  i=$((i+1)); [ $i -gt 600 ] && { echo "ebb up did not come up"; cat ${dir}/${name}-up.err; exit 1; }
  sleep 0.2
done
${body}
`,
  );
  chmodSync(path, 0o755);
  return path;
}

test("salloc -N 2: agents on n1 and n2 via srun, an MPICH program across them, and ebb ends with the allocation", async () => {
  const path = script("salloc", `${EBB} nodes --json\n${EBB} run -N 2 -n 4 ${hello}\n`);
  const r = await runProcess(["salloc", "-N", "2", path], { env: slurm.env, cwd: dir });
  expect(r.code).toBe(0);
  const nodes = JSON.parse(r.stdout.slice(r.stdout.indexOf("{"), r.stdout.indexOf("\nhello") > 0 ? r.stdout.indexOf("\nhello") : undefined)).nodes.map((n: any) => [n.name, n.state]);
  expect(nodes).toEqual([
    ["n1", "IDLE"],
    ["n2", "IDLE"],
  ]);
  const hellos = r.stdout.split("\n").filter((l) => l.startsWith("hello"));
  expect(hellos).toHaveLength(4);
  expect(new Set(hellos.map((l) => /node=(\S+)/.exec(l)?.[1]))).toEqual(new Set(["n1", "n2"]));
  expect(hellos.every((l) => l.includes("size=4 sum=6"))).toBe(true);
  // The script left ebb up running: the end of the allocation ends it, its agents and its controller.
  await nothingLeft(join(dir, "state-salloc"));
  expect(readFileSync(join(dir, "salloc-up.out"), "utf8")).toContain("ebb cluster is up in Slurm job");
}, 300_000);

test("salloc -N 2 with --tls: the agents get their certificate through srun's environment (not an argument); an MPICH program runs over TLS links", async () => {
  const state = join(dir, "state-tls");
  const path = script("tls", `cat ${state}/controller.url\n${EBB} run -N 2 -n 4 ${hello}\nls -l ${state}/agents/n1/tls\n`, " --tls");
  const r = await runProcess(["salloc", "-N", "2", path], { env: slurm.env, cwd: dir });
  expect({ code: r.code, err: r.stderr.includes("error") ? r.stderr : "" }).toEqual({ code: 0, err: "" });
  expect(r.stdout).toMatch(/^https:\/\/\S+:\d+$/m);
  const hellos = r.stdout.split("\n").filter((l) => l.startsWith("hello"));
  expect(hellos).toHaveLength(4);
  expect(new Set(hellos.map((l) => /node=(\S+)/.exec(l)?.[1]))).toEqual(new Set(["n1", "n2"]));
  expect(hellos.every((l) => l.includes("size=4 sum=6"))).toBe(true);
  // The agent's copies are its own (0600).
  expect(r.stdout).toMatch(/^-rw------- .* key\.pem$/m);
  expect(readFileSync(join(dir, "tls-up.out"), "utf8")).toContain(`the cluster CA is ${state}/ca.pem`);
  await nothingLeft(state);
}, 300_000);

test("sbatch -N 2: an elastic job grows from 1 node to 2 inside the allocation; nothing of ebb outlives the job", async () => {
  const counter = join(ROOT, "test/elastic/programs/counter.ts");
  const body = `
${EBB} run -N 1 --elastic --min-nodes 1 --max-nodes 2 -- ${process.execPath} ${counter} 100000 20 > ${dir}/elastic.out 2>&1 &
RUN=$!
# Resizable once its rank has called initAdapt (the program says so).
until grep -q "rank=0" ${dir}/elastic.out 2>/dev/null; do sleep 0.2; done
ID=$(${EBB} queue --json | sed -n 's/^ *"id": *\\([0-9]*\\).*/\\1/p' | head -1)
${EBB} resize "$ID" --nodes 2 --wait && echo RESIZED
${EBB} show "$ID" --json > ${dir}/elastic-show.json
kill $RUN
`;
  const path = script("sbatch", body);
  const sub = await runProcess(["sbatch", "--parsable", "-N", "2", "-o", join(dir, "sbatch-%j.out"), path], { env: slurm.env, cwd: dir });
  expect(sub.code).toBe(0);
  const jobId = sub.stdout.trim().split(";")[0]!;
  await waitFor("the Slurm job to end", () => {
    const q = Bun.spawnSync(["squeue", "-h", "-j", jobId], { env: slurm.env });
    return q.stdout.toString().trim() === "";
  }, 240_000);
  const out = readFileSync(join(dir, `sbatch-${jobId}.out`), "utf8");
  expect(out).toContain("RESIZED");
  const shown = JSON.parse(readFileSync(join(dir, "elastic-show.json"), "utf8"));
  expect(shown.adaptations.map((a: any) => [a.fromNodes, a.toNodes, a.state])).toEqual([[1, 2, "COMMITTED"]]);
  await nothingLeft(join(dir, "state-sbatch"));
  expect(existsSync(join(dir, "state-sbatch", "controller.lock"))).toBe(false);
}, 360_000);
