import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { decode } from "../../src/proto/channel.ts";
import { StringRecord } from "../../src/proto/common.ts";
import { ControllerToAgent } from "../../src/proto/agent.ts";

/** What z.record(z.string(), z.string()) (StringRecord's predecessor) says of `raw`: accepted or not. */
const asRecord = (raw: unknown) => z.record(z.string(), z.string()).safeParse(raw).success;

describe("StringRecord: an object of strings in one check", () => {
  test("accepts and refuses what z.record(z.string(), z.string()) does", () => {
    const cases: unknown[] = [{}, { A: "1", B: "" }, { A: 1 }, { A: null }, { A: ["x"] }, { A: {} }, [], ["a"], null, undefined, "s", 3, { A: "1", B: 2 }];
    for (const raw of cases) expect([raw, StringRecord.safeParse(raw).success]).toEqual([raw, asRecord(raw)]);
  });

  test("passes the object on, not a copy", () => {
    const env = { PATH: "/bin" };
    expect(StringRecord.parse(env)).toBe(env);
  });

  test("a refusal names the message's field, the entry and the reason", () => {
    const job = { id: 7, kind: "command", name: "x", argv: ["true"], env: {}, cwd: "/", output: "/dev/null", nodes: [{ name: "n1", addr: "a:1" }], tasks: [1], jobEnv: { EBB_JOB_ID: "7" } };
    expect(decode(ControllerToAgent, JSON.stringify({ t: "job.start", job })).ok).toBe(true);
    expect(decode(ControllerToAgent, JSON.stringify({ t: "job.start", job: { ...job, jobEnv: { EBB_JOB_ID: 7 } } }))).toEqual({ ok: false, error: 'job.jobEnv: "EBB_JOB_ID": expected a string, got number' });
    expect(decode(ControllerToAgent, JSON.stringify({ t: "job.start", job: { ...job, env: ["A=1"] } }))).toEqual({ ok: false, error: "job.env: expected an object of strings, got an array" });
    expect(decode(ControllerToAgent, JSON.stringify({ t: "job.start", job: { ...job, env: undefined } }))).toEqual({ ok: false, error: "job.env: expected an object of strings, got undefined" });
    // JSON.parse makes "__proto__" an own key; z.record dropped it silently, this refuses it.
    expect(decode(ControllerToAgent, JSON.stringify({ t: "job.start", job }).replace('"jobEnv":{', '"jobEnv":{"__proto__":"x",'))).toEqual({ ok: false, error: "job.jobEnv: the name __proto__ is not allowed" });
  });
});
