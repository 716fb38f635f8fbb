/** Each bad field of a request gets a 400 whose error names it; nothing bad gets a 5xx. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startController, type ControllerHandle } from "../../src/roles/controller/index.ts";

let ctl: ControllerHandle;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ebb-api-"));
  process.env.EBB_LOG = "error";
  ctl = await startController({ listen: { host: "127.0.0.1", port: 0 }, stateDir: dir });
});
afterAll(async () => {
  await ctl.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown, raw?: string) {
  const res = await fetch(`${ctl.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${ctl.token}`, "Content-Type": "application/json" },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  return { status: res.status, json: (await res.json()) as { error?: { code: string; message: string; field?: string }; id?: number } };
}

const ok = { argv: ["true"] };

describe("POST /v1/jobs", () => {
  const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ["nodes zero", { ...ok, nodes: 0 }, "nodes", />=?\s*1|at least/i],
    ["nodes not a number", { ...ok, nodes: "two" }, "nodes", /number/i],
    ["nodes fractional", { ...ok, nodes: 1.5 }, "nodes", /int/i],
    ["tasks negative", { ...ok, tasks: -1 }, "tasks", /.+/],
    ["fewer tasks than nodes", { ...ok, nodes: 2, tasks: 1 }, "tasks", /cannot use 2 nodes/],
    ["tasks beyond tasksPerNode", { ...ok, nodes: 1, tasks: 3, tasksPerNode: 2 }, "tasks", /do not fit/],
    ["tasksPerNode zero", { ...ok, tasksPerNode: 0 }, "tasksPerNode", /.+/],
    ["timeLimit text", { ...ok, timeLimit: "soon" }, "timeLimit", /not a duration/],
    ["timeLimit zero", { ...ok, timeLimit: 0 }, "timeLimit", /.+/],
    ["timeLimit zero minutes", { ...ok, timeLimit: "0" }, "timeLimit", /.+/],
    ["env name", { ...ok, env: { "BAD-NAME": "x" } }, "env", /letters, digits/],
    ["env value", { ...ok, env: { GOOD: 3 } }, "env", /string/i],
    ["cwd relative", { ...ok, cwd: "relative/dir" }, "cwd", /absolute/],
    ["argv empty", { argv: [] }, "argv", /must name a program/],
    ["argv not strings", { argv: [1, 2] }, "argv", /string/i],
    ["no program", {}, "argv", /exactly one of argv/],
    ["argv and script", { argv: ["true"], script: "#!/bin/sh" }, "argv", /exactly one of argv/],
    ["unknown field", { ...ok, nodez: 2 }, "", /nodez/],
    ["name empty", { ...ok, name: "" }, "name", /.+/],
    ["min above max", { ...ok, elastic: true, minNodes: 3, maxNodes: 2 }, "minNodes", /above maxNodes/],
    ["output not a string", { ...ok, output: 5 }, "output", /string/i],
    ["elastic settings on a rigid job", { ...ok, elasticSettings: { upper: 0.2 } }, "elasticSettings", /add elastic: true/],
    ["elastic setting not a number", { ...ok, elastic: true, maxNodes: 2, elasticSettings: { upper: "high" } }, "elasticSettings", /number/i],
    ["unknown elastic setting", { ...ok, elastic: true, maxNodes: 2, elasticSettings: { uper: 0.2 } }, "elasticSettings", /uper/],
    ["inverted thresholds", { ...ok, elastic: true, maxNodes: 2, elasticSettings: { upper: 0.01, lower: 0.1 } }, "elasticSettings", /lower 0.1 must be below upper 0.01/],
    ["array spec", { ...ok, array: "1-x" }, "array", /not a task id/],
    ["array range backwards", { ...ok, array: "5-1" }, "array", /low to high/],
    ["array too large", { ...ok, array: "0-20000" }, "array", /more than 10000 tasks/],
    ["array limit zero", { ...ok, array: "1-3%0" }, "array", /at least 1/],
    ["interactive array", { interactive: true, array: "1-3" }, "array", /interactive/],
    ["array over the controller's cap", { argv: ["true"], array: "1-9999" }, "array", /"1-9999" makes more than 1001 tasks, the most this controller takes in one array \(its --max-array-tasks, 1001\)/],
    ["dependency type", { ...ok, dependency: "afterwards:1" }, "dependency", /unknown dependency type/],
    ["dependency without a job", { ...ok, dependency: "afterok" }, "dependency", /name the job/],
    ["dependency on a job that does not exist", { ...ok, dependency: "afterok:424242" }, "dependency", /job 424242 does not exist/],
    ["dependency mixing , and ?", { ...ok, dependency: "afterok:1,afterany:2?singleton" }, "dependency", /not both/],
    ["begin not a time", { ...ok, begin: "tomorrow-ish" }, "begin", /.+/],
    ["node in nodelist and exclude", { ...ok, nodelist: ["n1"], exclude: ["n1"] }, "exclude", /both required/],
    ["nodelist bad name", { ...ok, nodelist: ["no spaces"] }, "nodelist", /letters, digits/],
    ["hold not a boolean", { ...ok, hold: "yes" }, "hold", /bool/i],
    ["NUL in argv", { argv: ["echo", "a\u0000b"] }, "argv", /control byte 0x00 at offset 1/],
    ["escape in argv", { argv: ["echo", "\u001b[2J"] }, "argv", /control byte 0x1b/],
    ["NUL in an environment value", { ...ok, env: { A: "x\u0000y" } }, "env", /control byte 0x00/],
    ["NUL in cwd", { ...ok, cwd: "/tmp/\u0000x" }, "cwd", /control byte 0x00/],
    ["newline in output", { ...ok, output: "out\nput" }, "output", /control byte 0x0a/],
    ["NUL in error", { ...ok, error: "e\u0000" }, "error", /control byte 0x00/],
    ["control byte in name", { ...ok, name: "a\u0007b" }, "name", /control byte 0x07/],
    ["NUL in a script", { script: "#!/bin/sh\necho \u0000\n" }, "script", /NUL/],
    ["name too long", { ...ok, name: "n".repeat(201) }, "name", /200/],
    ["environment too large", { ...ok, env: Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`V${i}`, "x".repeat(100_000)])) }, "env", /over the 1048576/],
    ["too many environment variables", { ...ok, env: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`V${i}`, ""])) }, "env", /5000 variables/],
    ["argv too large", { argv: ["echo", ...Array.from({ length: 20 }, () => "x".repeat(60_000))] }, "argv", /over the 1048576/],
    ["cpusPerTask zero", { ...ok, cpusPerTask: 0 }, "cpusPerTask", /.+/],
    ["mem not a size", { ...ok, mem: "lots" }, "mem", /not a memory size/],
    ["mem zero", { ...ok, mem: "0" }, "mem", /whole node \(exclusive\)/],
    ["mem fractional MiB", { ...ok, mem: 1.5 }, "mem", /whole number of MiB/],
    ["mem and memPerCpu", { ...ok, mem: "4G", memPerCpu: 1024 }, "memPerCpu", /not mem and memPerCpu/],
    ["memPerCpu and memPerGpu", { ...ok, gpus: 1, memPerCpu: 1024, memPerGpu: "4G" }, "memPerGpu", /per GPU \(memPerGpu\), not memPerCpu and memPerGpu/],
    ["cpusPerTask and cpusPerGpu", { ...ok, gpus: 1, cpusPerTask: 2, cpusPerGpu: 4 }, "cpusPerGpu", /not both/],
    ["cpusPerGpu without GPUs", { ...ok, cpusPerGpu: 4 }, "cpusPerGpu", /give the GPUs too/],
    ["memPerGpu without GPUs", { ...ok, memPerGpu: "1G" }, "memPerGpu", /give the GPUs too/],
    ["two GPU counts", { ...ok, gpus: 2, gpusPerNode: 1 }, "gpusPerNode", /not gpus and gpusPerNode/],
    ["gpuType without a count", { ...ok, gpuType: "a100" }, "gpuType", /needs a count/],
    ["gpuType with a colon", { ...ok, gpuType: "a100:2", gpus: 1 }, "gpuType", /GPU type/],
    ["GPUs per job on an elastic job", { ...ok, elastic: true, maxNodes: 2, gpus: 2 }, "gpus", /per node \(gpusPerNode\)/],
    ["constraint with an operator", { ...ok, constraint: ["a|b"] }, "constraint", /feature/],
    ["exclusive not a boolean", { ...ok, exclusive: "yes" }, "exclusive", /bool/i],
    ["argv with too many words", { argv: Array.from({ length: 5000 }, () => "x") }, "argv", /4096/],
    ["script arguments too many", { script: "#!/bin/sh\n", args: Array.from({ length: 1025 }, () => "x") }, "args", /has 1025 arguments, over the 1024 a batch script may take/],
    ["script arguments too large", { script: "#!/bin/sh\n", args: ["x".repeat(40_000), "y".repeat(40_000)] }, "args", /is 80002 bytes in all, over the 65536/],
    ["script arguments with a NUL", { script: "#!/bin/sh\n", args: ["a\u0000b"] }, "args", /control byte 0x00/],
    ["arguments of a command", { ...ok, args: ["x"] }, "args", /only a batch script takes arguments/],
  ];
  for (const [what, body, field, message] of cases) {
    test(`${what} -> 400 naming ${field || "the field"}`, async () => {
      const r = await call("POST", "/v1/jobs", body);
      expect(r.status).toBe(400);
      expect(r.json.error!.code).toBe("invalid_request");
      if (field) {
        expect(r.json.error!.field?.split(".")[0]).toBe(field);
        expect(r.json.error!.message).toContain(`${field}`);
      }
      expect(r.json.error!.message).toMatch(message);
    });
  }

  test("malformed JSON -> 400 that says so", async () => {
    const r = await call("POST", "/v1/jobs", undefined, "{nodes: 2");
    expect(r.status).toBe(400);
    expect(r.json.error!.message).toContain("not valid JSON");
  });

  test("newlines and tabs in argv and environment values are fine", async () => {
    const r = await call("POST", "/v1/jobs", { argv: ["sh", "-c", "echo a\n\techo b"], env: { A: "line1\nline2" }, hold: true });
    expect(r.status).toBe(201);
  });

  test("a JSON array or null body -> 400, never a 5xx", async () => {
    for (const raw of ["[]", "null", '"x"', "12"]) expect((await call("POST", "/v1/jobs", undefined, raw)).status).toBe(400);
  });

  test("a valid job is accepted and the controller keeps serving after all the bad ones", async () => {
    const r = await call("POST", "/v1/jobs", { ...ok, timeLimit: "1:30", env: { A: "1" }, cwd: "/tmp" });
    expect(r.status).toBe(201);
    expect(typeof r.json.id).toBe("number");
    const job = await call("GET", `/v1/jobs/${r.json.id}`);
    expect((job.json as any).timeLimit).toBe(90);
    expect((job.json as any).state).toBe("PENDING");
  });

  test("timeLimit \"UNLIMITED\" or \"INFINITE\" (Slurm's --time=0): no limit of the job's own, the longest there is without partitions", async () => {
    for (const timeLimit of ["UNLIMITED", "infinite"]) {
      const r = await call("POST", "/v1/jobs", { ...ok, timeLimit, hold: true });
      expect(r.status).toBe(201);
      expect(((await call("GET", `/v1/jobs/${r.json.id}`)).json as any).timeLimit).toBe(365 * 86400);
    }
  });
});

describe("paths and queries", () => {
  test("a job id that is not a number -> 400 naming id; a missing job -> 404", async () => {
    const bad = await call("GET", "/v1/jobs/abc");
    expect(bad.status).toBe(400);
    expect(bad.json.error!.field).toBe("id");
    const missing = await call("GET", "/v1/jobs/424242");
    expect(missing.status).toBe(404);
    expect(missing.json.error!.message).toContain("job 424242 does not exist");
    expect((await call("DELETE", "/v1/jobs/424242")).status).toBe(404);
  });

  test("state filter with an unknown state -> 400 naming state; bad limit -> 400 naming limit", async () => {
    const r = await call("GET", "/v1/jobs?state=RUNNING,BOGUS");
    expect(r.status).toBe(400);
    expect(r.json.error!.field).toBe("state.1");
    const l = await call("GET", "/v1/jobs?limit=0");
    expect(l.status).toBe(400);
    expect(l.json.error!.field).toBe("limit");
    const u = await call("GET", "/v1/jobs?colour=red");
    expect(u.status).toBe(400);
    expect(u.json.error!.message).toContain("colour");
  });

  test("drain: a bad owner flag -> 400 naming owner; an unknown node -> 404", async () => {
    const bad = await call("POST", "/v1/nodes/node01/drain", { owner: "yes" });
    expect(bad.status).toBe(400);
    expect(bad.json.error!.field).toBe("owner");
    expect((await call("POST", "/v1/nodes/nosuch/drain", { owner: true })).status).toBe(404);
  });

  test("steps of a job that is not running -> 409; bad step bodies -> 400", async () => {
    const { json } = await call("POST", "/v1/jobs", ok);
    const step = await call("POST", `/v1/jobs/${json.id}/steps`, { argv: ["true"], cwd: "/", envDigest: "0".repeat(64) });
    expect(step.status).toBe(409);
    expect(step.json.error!.code).toBe("job_not_running");
    const bad = await call("POST", `/v1/jobs/${json.id}/steps`, { argv: [] });
    expect(bad.status).toBe(400);
    expect(bad.json.error!.field).toBe("argv");
    const nul = await call("POST", `/v1/jobs/${json.id}/steps`, { argv: ["a\u0000"] });
    expect(nul.status).toBe(400);
    expect(nul.json.error!.field?.split(".")[0]).toBe("argv");
    // The step credential covers the ranks' environment and working directory: both are required.
    for (const [field, body] of [["envDigest", { argv: ["true"], cwd: "/" }], ["cwd", { argv: ["true"], envDigest: "0".repeat(64) }]] as const) {
      const missing = await call("POST", `/v1/jobs/${json.id}/steps`, body);
      expect(missing.status).toBe(400);
      expect(missing.json.error!.field).toBe(field);
    }
  });

  test("unknown routes -> 404 JSON pointing at the OpenAPI document", async () => {
    const r = await call("GET", "/v1/nope");
    expect(r.status).toBe(404);
    expect(r.json.error!.message).toContain("openapi.json");
  });

  test("a job token acts on its own job and the jobs it submitted, no other; it sees every job, another's without its private part", async () => {
    const { jobToken } = await import("../../src/proto/credential.ts");
    const token = jobToken(ctl.clusterKey, 1);
    const as = (method: string, path: string, body?: unknown) =>
      fetch(`${ctl.url}${path}`, { method, headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    expect((await as("GET", "/v1/jobs/1")).status).toBe(200);
    const other = await as("GET", "/v1/jobs/2");
    expect(other.status).toBe(200);
    expect(await other.json()).toMatchObject({ id: 2, private: true, argv: null, env: {} });
    expect((await as("DELETE", "/v1/jobs/2")).status).toBe(403);
    expect((await as("POST", "/v1/jobs/2/hold")).status).toBe(403);
    const made = await as("POST", "/v1/jobs", { argv: ["true"], hold: true });
    expect(made.status).toBe(201);
    const child = ((await made.json()) as { id: number }).id;
    const view = (await (await as("GET", `/v1/jobs/${child}`)).json()) as { submittedBy: number; reason: string };
    expect(view).toMatchObject({ submittedBy: 1, reason: "JobHeldUser" });
    expect((await as("POST", `/v1/jobs/${child}/release`)).status).toBe(200);
    const listed = (await (await as("GET", "/v1/jobs")).json()) as { jobs: { id: number; private: boolean }[] };
    expect(listed.jobs.filter((j) => !j.private).map((j) => j.id).sort((a, b) => a - b)).toEqual([1, child]);
    expect(listed.jobs.some((j) => j.id === 2 && j.private)).toBe(true);
    expect((await as("DELETE", `/v1/jobs/${child}`)).status).toBe(200);
    expect((await as("GET", "/v1/nodes")).status).toBe(200);
    expect((await as("POST", "/v1/nodes/node01/drain")).status).toBe(403);
  });
});
