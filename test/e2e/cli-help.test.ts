/** `ebb --help` lists every subcommand, and each subcommand's --help shows its flags. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT, runProcess } from "../support/cluster.ts";

/** Help goes to a pipe here, so it must come without colour codes. */
async function help(args: string[]): Promise<{ code: number; text: string }> {
  const r = await runProcess([process.execPath, join(ROOT, "src/main.ts"), ...args, "--help"], { env: { ...process.env, NO_COLOR: undefined } });
  return { code: r.code, text: r.stdout + r.stderr };
}

const FLAGS: Record<string, string[]> = {
  up: ["--nodes", "--cpus-per-node", "--listen", "--state-dir"],
  controller: ["--listen", "--db", "--state-dir", "--heartbeat", "--policy"],
  agent: ["--controller", "--name", "--cpus", "--listen"],
  run: ["--nodes", "--ntasks", "--tasks-per-node", "--time", "--label", "--mpi", "--controller"],
  submit: ["--nodes", "--ntasks", "--time", "--output"],
  queue: ["--all", "--json"],
  show: ["--json"],
  cancel: ["JOBID"],
  resize: ["--nodes", "--wait"],
  nodes: ["--json"],
  sim: ["--policy"],
};

test("ebb --help lists every subcommand", async () => {
  const { code, text } = await help([]);
  expect(code).toBe(0);
  for (const cmd of Object.keys(FLAGS)) expect(text).toMatch(new RegExp(`^\\s+${cmd}\\s+\\S`, "m"));
  expect(text).not.toContain("\x1b[");
});

describe("each subcommand's --help", () => {
  for (const [cmd, flags] of Object.entries(FLAGS)) {
    test(cmd, async () => {
      const { code, text } = await help([cmd]);
      expect(code).toBe(0);
      expect(text).toContain(`ebb ${cmd}`);
      for (const f of flags) expect(text).toContain(f);
      expect(text).not.toContain("\x1b[");
    });
  }
});
