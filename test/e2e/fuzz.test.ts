/**
 * Seeded, bounded fuzzing of the PMI server: 1,000 random lines; it never throws and answers or
 * closes. (The API's fuzzing, under two users, is fuzz-api.test.ts.) The seed is printed;
 * EBB_FUZZ_SEED replays a run.
 */
import { expect, test } from "bun:test";
import { PmiConnection } from "../../src/pmi/connection.ts";
import { SingleNodeJob } from "../support/pmi-job.ts";
import { randomString, rng } from "../support/hostile.ts";

const SEED = Number(process.env.EBB_FUZZ_SEED ?? 20261126);
const CASES = 1000;

test(`PMI: ${CASES} random lines, every one answered or the connection closed, nothing thrown (seed ${SEED})`, () => {
  const r = rng(SEED + 1);
  const CMDS = ["init", "get_maxes", "get_appnum", "get_my_kvsname", "barrier_in", "put", "get", "finalize", "abort", "initack", "spawn", "publish_name", "lookup_name", "get_universe_size", "fullinit", "job-getid", "kvs-put", "kvs-get", "kvs-fence", "info-getjobattr", "bogus"];
  let replies = 0;
  let closes = 0;
  const open = () => {
    const job = new SingleNodeJob(2);
    return new PmiConnection({ write: () => void replies++, close: () => void closes++ }, { backend: job.backend(r.int(2)) });
  };
  let conn = open();
  for (let i = 0; i < CASES; i++) {
    if (!conn.isOpen) conn = open();
    if (r.next() < 0.3) conn.feed("cmd=init pmi_version=1 pmi_subversion=1\n");
    const roll = r.next();
    let line: string;
    if (roll < 0.6) {
      const args = Array.from({ length: r.int(4) }, () => `${r.pick(["kvsname", "key", "value", "pmi_version", "pmi_subversion", "pmiid", "service", "port", "thrid", randomString(r)])}=${randomString(r)}`);
      line = `cmd=${r.pick(CMDS)} ${args.join(" ")}\n`;
    } else if (roll < 0.8) line = `${randomString(r)}\n`;
    else {
      const payload = `cmd=${r.pick(CMDS)};${randomString(r)};`;
      line = `cmd=init pmi_version=2 pmi_subversion=0\n${String(r.next() < 0.8 ? payload.length : r.int(999999)).padStart(6, "0")}${payload}`;
    }
    expect(() => conn.feed(line)).not.toThrow();
  }
  console.log(`PMI: ${CASES} random lines, ${replies} replies, ${closes} connections closed`);
  expect(replies + closes).toBeGreaterThan(0);
});
