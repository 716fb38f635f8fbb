import { describe, expect, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import { argvDigest, envDigest, jobToken, outputDigest, signCredential, verifyCredential, verifyJobToken } from "../../src/proto/credential.ts";

// node:crypto's digests of the same texts: credentials stay what other versions of ebb sign and check.
const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const hmac = (key: string, text: string) => createHmac("sha256", key).update(text).digest("hex");
const key = "k3y-".repeat(16);

describe("credential digests and signatures", () => {
  test("are the sha256 and HMAC-SHA256 of their canonical texts", () => {
    expect(argvDigest(["true", "é x"])).toBe(sha('["true","é x"]'));
    expect(envDigest({ B: "2", A: "1" })).toBe(sha('[["A","1"],["B","2"]]'));
    // By UTF-16 code units, as other versions compared names: not by locale, case or length.
    expect(envDigest({ b: "3", Ä: "5", _A: "4", B: "2", A: "1", AB: "6" })).toBe(sha('[["A","1"],["AB","6"],["B","2"],["_A","4"],["b","3"],["Ä","5"]]'));
    expect(outputDigest({ node: "n1", path: "/dev/null" })).toBe(sha('["n1","/dev/null",null]'));
    expect(outputDigest(undefined)).toBeUndefined();
    const cred = signCredential(key, { jobId: 4, stepId: 1, nodes: ["a", "b"], expires: 1000, env: sha("e"), jobEnv: sha("j"), cwd: "/w" });
    expect(cred.sig).toBe(hmac(key, `step|4.1|a,b|1000|${JSON.stringify([null, sha("e"), sha("j"), "/w", null])}`));
    expect(jobToken(key, 12)).toBe(`job.12.${hmac(key, "job|12")}`);
  });

  test("are checked against the key and every covered field", () => {
    const cred = signCredential(key, { jobId: 4, stepId: 1, nodes: ["a"], expires: 1000, env: sha("e"), jobEnv: sha("j"), cwd: "/w" });
    expect(verifyCredential(key, cred, 999)).toBeUndefined();
    expect(verifyCredential(key, cred, 1001)).toBe("step credential expired");
    expect(verifyCredential(`${key}x`, cred, 0)).toBe("bad step credential signature");
    expect(verifyCredential(key, { ...cred, cwd: "/v" }, 0)).toBe("bad step credential signature");
    expect(verifyJobToken(key, jobToken(key, 12))).toBe(12);
    expect(verifyJobToken(`${key}x`, jobToken(key, 12))).toBeUndefined();
  });
});
