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
  up: ["--nodes", "--cpus-per-node", "--listen", "--state-dir", "--hosts", "--hostfile", "--ssh-opts", "--ssh-user", "--remote-path", "--require-all", "--controller-on-first", "--slurm"],
  controller: ["--listen", "--db", "--state-dir", "--heartbeat", "--policy", "--tied-to-stdin"],
  agent: ["--controller", "--name", "--cpus", "--listen", "--advertise", "--tied-to-stdin"],
  run: ["--nodes", "--ntasks", "--tasks-per-node", "--cpus-per-task", "--mem", "--mem-per-cpu", "--gpus", "--gpus-per-node", "--gpus-per-task", "--gres", "--constraint", "--exclusive", "--time", "--label", "--mpi", "--controller"],
  submit: ["--nodes", "--ntasks", "--ntasks-per-node", "--cpus-per-task", "--mem", "--mem-per-cpu", "--gpus", "--gpus-per-node", "--gpus-per-task", "--gres", "--constraint", "--exclusive", "--time", "--output"],
  queue: ["--all", "--json"],
  show: ["--json"],
  cancel: ["JOBID"],
  resize: ["--nodes", "--wait"],
  nodes: ["--json"],
  drain: ["NODE", "--reason", "--owner"],
  resume: ["NODE"],
  sim: ["--policy"],
  hold: ["JOBID"],
  release: ["JOBID"],
  wait: ["JOBID", "--json"],
  history: ["--since", "--until", "--state", "--name", "--user", "--json"],
  plans: ["--job", "--limit", "--json"],
  completion: ["SHELL", "--list-jobs"],
};

const ebb = (args: string[]) => runProcess([process.execPath, join(ROOT, "src/main.ts"), ...args], { env: { ...process.env, NO_COLOR: undefined, EBB_CONTROLLER: "http://127.0.0.1:9" } });

describe("strict command lines", () => {
  for (const cmd of Object.keys(FLAGS)) {
    test(`ebb ${cmd} --bogus: exit 2, one line naming the flag`, async () => {
      const r = await ebb([cmd, "--bogus", ...(cmd === "run" ? ["true"] : [])]);
      expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 2, stderr: `ebb ${cmd}: unknown flag --bogus (ebb ${cmd} --help lists the flags)\n`, stdout: "" });
    });
  }

  test("a close flag gets a 'did you mean'; a missing value and extra arguments are errors too", async () => {
    const cases: [string[], string][] = [
      [["queue", "--al"], "ebb queue: unknown flag --al; did you mean --all? (ebb queue --help lists the flags)"],
      [["submit", "--nodez", "2", "x.sh"], "ebb submit: unknown flag --nodez; did you mean --nodes? (ebb submit --help lists the flags)"],
      [["submit", "-N"], "ebb submit: -N needs a value"],
      [["submit", "--wrap", "true", "x.sh", "-N", "2"], "ebb submit: --wrap takes no script nor arguments after it (x.sh -N 2); put them in its command"],
      [["run", "--time"], "ebb run: --time needs a value"],
      [["show", "1", "2"], 'ebb show: unexpected argument "2" (ebb show --help says what it takes)'],
      [["nodes", "extra"], 'ebb nodes: unexpected argument "extra" (ebb nodes --help says what it takes)'],
      [["queue", "--json=yes"], "ebb queue: --json takes no value"],
      [["sumbit", "x.sh"], 'ebb: unknown command "sumbit"; did you mean submit? (ebb help lists the commands)'],
      [["--bogus"], "ebb: unknown flag --bogus (ebb takes --help or --version before a command; ebb help lists the commands)"],
      [["help", "frobnicate"], 'ebb: unknown command "frobnicate" (ebb help lists the commands)'],
      [["up", "--controller-on-first"], "ebb up: --controller-on-first goes with --hosts or --hostfile"],
      [["up", "--slurm", "--controller-on-first"], "ebb up: --controller-on-first goes with --hosts or --hostfile, not --slurm (srun starts the agents)"],
      [["up", "--hosts", "a", "--controller-on-first", "--config", "c.json"], "ebb up: --config names a file here; with --controller-on-first the controller runs on the first host: give its settings as flags"],
    ];
    for (const [args, line] of cases) {
      const r = await ebb(args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 2, stderr: `${line}\n` });
    }
  });

  test("ebb help, ebb help CMD and ebb --version work, without colour codes off a terminal", async () => {
    const main = await ebb(["help"]);
    expect(main.code).toBe(0);
    expect(main.stdout).toContain("USAGE ebb");
    const sub = await ebb(["help", "submit"]);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain("USAGE ebb submit [OPTIONS] [SCRIPT]");
    for (const r of [main, sub]) expect(r.stdout).not.toContain("\x1b[");
    const version = await ebb(["--version"]);
    expect(version).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) });
    const none = await ebb([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("ebb: no command given");
  });
});

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
