/** Which agent cgroups a starting agent sweeps (cgroup-sweep.ts): its own earlier lives, others' that are gone, and nothing else. */
import { expect, test } from "bun:test";
import { classify, hostsAgents } from "../../src/roles/agent/cgroup-sweep.ts";

const self = { name: "node02", pid: 500 };
const liveAgents = new Set([700]);
const kind = (entry: string) => classify(entry, self, (pid) => liveAgents.has(pid));

test("its own name with a pid that is not a live ebb agent is an earlier life; with its own pid too (listed before it made its own)", () => {
  expect(kind("ebb-agent-node02-123")).toBe("own-life");
  expect(kind("ebb-agent-node02-500")).toBe("own-life");
});

test("another name of a dead pid is gone (removed, never killed); a live agent's, and another agent's of this process, are kept", () => {
  expect(kind("ebb-agent-node03-123")).toBe("gone");
  expect(kind("ebb-agent-node02-700")).toBe("keep");
  expect(kind("ebb-agent-node03-700")).toBe("keep");
  expect(kind("ebb-agent-node03-500")).toBe("keep");
});

test("names with dashes and digits: the pid is the last number", () => {
  expect(classify("ebb-agent-rack-1-n-12-123", { name: "rack-1-n-12", pid: 9 }, () => false)).toBe("own-life");
  expect(classify("ebb-agent-rack-1-n-12-123", { name: "rack-1-n", pid: 9 }, () => false)).toBe("gone");
});

test("what is not an agent's leaf is kept: the agent's own leaf of v2, other names, a pid of 0", () => {
  for (const e of ["ebb-agent-self", "ebb-agent-node02", "system.slice", "job-3", "ebb-agent-node02-0", "xebb-agent-node02-1"]) expect(kind(e)).toBe("keep");
});

test("a pid hosts agents when its command line runs ebb agent, ebb up or bun test; a reused pid's other program does not", () => {
  expect(hostsAgents(["/usr/local/bin/ebb", "agent", "--name", "n1"])).toBe(true);
  expect(hostsAgents(["bun", "--no-env-file", "src/main.ts", "up", "--nodes", "4"])).toBe(true);
  expect(hostsAgents(["/x/bun.exe", "test", "test/e2e/a.test.ts"])).toBe(true);
  expect(hostsAgents(["sleep", "300"])).toBe(false);
  expect(hostsAgents(["/usr/bin/python3", "serve.py"])).toBe(false);
  expect(hostsAgents([""])).toBe(false);
});
