/**
 * srun --multi-prog's configuration files as the script each rank runs (cli/multi-prog.ts), run
 * by sh for each rank; the expected lines are what srun 22.05 printed for the same file on the
 * loopback Slurm of test/support/slurm.ts.
 */
import { describe, expect, test } from "bun:test";
import { multiProgScript } from "../../src/cli/multi-prog.ts";
import { srunToRun } from "../../src/cli/srun.ts";

const CONF = [
  "# an MPMD layout",
  "0,2-3   echo  first task:%t offset:%o",
  `1       bash -c 'echo "second $SLURM_PROCID of $SLURM_NTASKS"'`,
  "*       echo rest %t \\",
  "  %o",
].join("\n");

/** What rank `rank` of `ntasks` prints, running `script`. */
function rankRuns(script: string, rank: number, ntasks = 6): { out: string; err: string; code: number } {
  const r = Bun.spawnSync(["sh", "-c", script, "srun-multi-prog"], { env: { PATH: process.env.PATH!, SLURM_PROCID: String(rank), SLURM_NTASKS: String(ntasks) } });
  return { out: r.stdout.toString(), err: r.stderr.toString(), code: r.exitCode };
}

describe("srun --multi-prog", () => {
  test("each rank runs its line, with %t and %o; * takes the others (its %o is the rank)", () => {
    const script = multiProgScript(CONF, "mp.conf", 6);
    expect([0, 1, 2, 3, 4, 5].map((r) => rankRuns(script, r).out)).toEqual([
      "first task:0 offset:0\n",
      "second 1 of 6\n",
      "first task:2 offset:1\n",
      "first task:3 offset:2\n",
      "rest 4 4\n",
      "rest 5 5\n",
    ]);
  });

  test("a rank no line names: refused before the step with the task count, else that rank fails with srun's words", () => {
    expect(() => multiProgScript("0 echo a\n", "short.conf", 2)).toThrow("Configuration file short.conf invalid, no record for task id 1");
    expect(rankRuns(multiProgScript("0 echo a\n", "short.conf"), 1)).toEqual({ out: "", err: "srun: error: Configuration file short.conf invalid, no record for task id 1\n", code: 1 });
    expect(() => multiProgScript("0-x echo a\n", "bad.conf")).toThrow('bad.conf line 1: "0-x" is not a list of ranks (0,2-3) or *');
    expect(() => multiProgScript("\n3\n", "bad.conf")).toThrow("bad.conf line 2: no program after the ranks 3");
  });

  test("srun --multi-prog FILE runs the file's script in every rank; a missing file or a program in its place is refused", () => {
    const env = { EBB_JOB_ID: "7", SLURM_NTASKS: "6" };
    const plan = srunToRun(["-l", "--multi-prog", "mp.conf"], env, () => CONF);
    expect(plan.run).toEqual(["--ntasks=6", "--label", "--input=all", "--no-kill-on-bad-exit", "--say-ends=srun", "--", "sh", "-c", multiProgScript(CONF, "mp.conf", 6), "srun-multi-prog"]);
    const refusal = (read: (f: string) => string) => {
      try {
        return srunToRun(["--multi-prog", "x.conf"], env, read);
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(refusal(() => { throw new Error("ENOENT"); })).toBe("Could not open multi_prog config file x.conf");
    expect(refusal(() => "\x7fELF\0\0")).toBe("--multi-prog x.conf: a program, not a configuration file (lines of ranks, program, arguments)");
  });
});
