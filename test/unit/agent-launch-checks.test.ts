/**
 * A launch's node-independent checks (roles/agent/launch-checks.ts), made once per credential and
 * spec objects and reused by every node of the process that gets the same ones; never reused for
 * other objects or a changed spec.
 */
import { expect, test } from "bun:test";
import { argvDigest, envDigest, signCredential } from "../../src/proto/credential.ts";
import type { StepSpec } from "../../src/proto/step.ts";
import { decodeStepDown, launchRefusal, nodeIndexIn, signatureRefusal, stepRanks, stepRanksOf } from "../../src/roles/agent/launch-checks.ts";

const key = "k".repeat(64);
const env = { PATH: "/usr/bin:/bin" };
const jobEnv = { EBB_JOB_ID: "7" };
const nodes = ["n1", "n2", "n3"].map((name, i) => ({ name, addr: `127.0.0.1:${4000 + i}` }));
const spec = (): StepSpec => ({ jobId: 7, stepId: 1, argv: ["true"], env: { ...env }, jobEnv: { ...jobEnv }, cwd: "/tmp", nodes: nodes.map((n) => ({ ...n })), tasks: [2, 1, 3], jobNodes: ["n1", "n2", "n3"], fanout: 8, pmi: "none" }) as StepSpec;
const cred = (over: Record<string, unknown> = {}) =>
  signCredential(key, { jobId: 7, stepId: 1, nodes: ["n1", "n2", "n3"], expires: Date.now() - 1, argv: argvDigest(["true"]), env: envDigest(env), jobEnv: envDigest(jobEnv), cwd: "/tmp", ...over } as never);

test("a good launch passes (its expiry is not this check's), and the same objects get the same verdict, their covered parts frozen", () => {
  const c = cred();
  const s = spec();
  expect(launchRefusal(key, c, s)).toBeUndefined();
  expect(Object.isFrozen(s.env) && Object.isFrozen(s.nodes) && Object.isFrozen(s.nodes[0]) && Object.isFrozen(c)).toBe(true);
  expect(launchRefusal(key, c, s)).toBeUndefined();
  expect(() => {
    (s.env as Record<string, string>).LD_PRELOAD = "/tmp/x.so";
  }).toThrow();
});

test("refusals: another key, another step or node list, a spec the credential does not cover; a changed part is judged again", () => {
  expect(launchRefusal("x".repeat(64), cred(), spec())).toBe("bad step credential signature");
  const c = cred();
  const s = spec();
  expect(launchRefusal(key, c, s)).toBeUndefined();
  // The same credential with another key: judged again, not taken from the first verdict.
  expect(launchRefusal("x".repeat(64), c, s)).toBe("bad step credential signature");
  expect(launchRefusal(key, cred({ nodes: ["n1", "n3", "n2"] }), spec())).toBe("the credential does not match the step");
  expect(launchRefusal(key, cred({ stepId: 2 }), spec())).toBe("the credential does not match the step");
  expect(launchRefusal(key, cred(), { ...spec(), cwd: "/" })).toContain("credential field cwd");
  // The spec object kept, a covered part replaced after the verdict: judged again.
  const s2 = spec();
  const c2 = cred();
  expect(launchRefusal(key, c2, s2)).toBeUndefined();
  (s2 as { argv: string[] }).argv = ["sh", "-c", "touch pwned"];
  expect(launchRefusal(key, c2, s2)).toContain("credential field argv");
  (s2 as { cwd: string }).cwd = "/";
  expect(launchRefusal(key, c2, s2)).toContain("credential field");
});

test("each node's index and first rank, once per spec", () => {
  const s = spec();
  expect(["n1", "n2", "n3", "n4"].map((n) => nodeIndexIn(s, n))).toEqual([0, 1, 2, -1]);
  expect(stepRanks(s)).toEqual([[0, 1], [2], [3, 4, 5]]);
  expect(stepRanks({ ...s, distribution: { kind: "cyclic" } })).toEqual([[0, 3], [1], [2, 4, 5]]);
  expect([0, 1, 2].map((i) => stepRanksOf(s, i))).toEqual([[0, 1], [2], [3, 4, 5]]);
  expect(stepRanksOf({ ...s, distribution: { kind: "cyclic" } }, 2)).toEqual([2, 4, 5]);
});

test("a launch text decoded again (the same launch to another agent of the thread) gets the same objects, so its checks are made once; another text is decoded anew", () => {
  const text = JSON.stringify({ t: "launch", step: "7.1", cred: cred(), spec: spec() });
  const a = decodeStepDown(text);
  const b = decodeStepDown(`${text}`);
  if (!a.ok || !b.ok || a.value.t !== "launch" || b.value.t !== "launch") throw new Error("not decoded");
  expect(b.value).toBe(a.value);
  expect(launchRefusal(key, a.value.cred, a.value.spec)).toBeUndefined();
  const other = decodeStepDown(JSON.stringify({ t: "launch", step: "7.1", cred: cred(), spec: { ...spec(), cwd: "/" } }));
  if (!other.ok || other.value.t !== "launch") throw new Error("not decoded");
  expect(other.value).not.toBe(a.value);
  expect(other.value.spec.cwd).toBe("/");
  expect(launchRefusal(key, other.value.cred, other.value.spec)).toContain("credential field cwd");
  // Other messages and bad input are decoded each time, as before.
  const end = JSON.stringify({ t: "end", step: "7.1" });
  expect(decodeStepDown(end)).toEqual({ ok: true, value: { t: "end", step: "7.1" } });
  expect(decodeStepDown("{").ok).toBe(false);
  expect(decodeStepDown(JSON.stringify({ t: "launch", step: "7.1" })).ok).toBe(false);
});

test("a credential's signature is judged once per object and key, the credential frozen under its verdict", () => {
  const c = cred();
  expect(signatureRefusal(key, c)).toBeUndefined();
  expect(Object.isFrozen(c) && Object.isFrozen(c.nodes)).toBe(true);
  expect(() => {
    (c as { stepId: number }).stepId = 2;
  }).toThrow();
  expect(signatureRefusal(key, c)).toBeUndefined();
  expect(signatureRefusal("x".repeat(64), c)).toBe("bad step credential signature");
  expect(signatureRefusal(key, { ...cred(), cwd: "/" })).toBe("bad step credential signature");
  // The launch's own check after the arrival's: the same verdict.
  expect(launchRefusal(key, c, spec())).toBeUndefined();
});
