/** The command-line parser is strict, and #EBB / #SBATCH lines are read with it. */
import { describe, expect, test } from "bun:test";
import { closest, defineArgs, parse, renderUsage, wrap } from "../../src/cli/command.ts";
import { directives, scriptFlags, shellWords } from "../../src/cli/directives.ts";
import { SBATCH_LONG_FLAGS, SBATCH_ONLY } from "../../src/cli/slurm-flags.ts";
import { jobArgs, jobSubmit } from "../../src/cli/submit.ts";
import { allMemoryWarning, resourceFields, tasksPerGpuFlag } from "../../src/cli/resources.ts";
import { requestFrom } from "../../src/domain/request.ts";

const args = defineArgs({
  nodes: { type: "string", alias: "N", description: "nodes", valueHint: "N" },
  label: { type: "boolean", alias: "l", description: "label" },
  hold: { type: "boolean", alias: "H", description: "hold" },
  policy: { type: "string", repeat: true, description: "policy" },
  payoff: { type: "boolean", description: "payoff", negativeDescription: "no payoff" },
  "tasks-per-node": { type: "string", alias: "ntasks-per-node", description: "tpn" },
  jobid: { type: "positional", description: "job" },
});

const fails = (raw: string[], message: RegExp | string, opts = {}) => expect(() => parse("x", args, raw, opts)).toThrow(message);

describe("parse", () => {
  test("long and short flags, with = or the next word, and clusters of short ones", () => {
    expect(parse("x", args, ["--nodes", "2"]).nodes).toBe("2");
    expect(parse("x", args, ["--nodes=2"]).nodes).toBe("2");
    expect(parse("x", args, ["-N", "2"]).nodes).toBe("2");
    expect(parse("x", args, ["-N2"]).nodes).toBe("2");
    const c = parse("x", args, ["-lHN", "3", "12"]);
    expect([c.label, c.hold, c.nodes, c.jobid]).toEqual([true, true, "3", "12"]);
    expect(parse("x", args, ["--ntasks-per-node", "4"])["tasks-per-node"]).toBe("4");
  });

  test("an unknown flag is an error, with a 'did you mean' when one is close", () => {
    fails(["--bogus"], "unknown flag --bogus (ebb x --help lists the flags)");
    fails(["--node", "2"], "unknown flag --node; did you mean --nodes?");
    fails(["--lable"], "did you mean --label?");
    fails(["-nodes", "2"], "unknown flag -nodes; did you mean --nodes?");
    fails(["-q"], "unknown flag -q");
    fails(["--account=lab"], "unknown flag --account (ebb keeps no accounts)");
  });

  test("a flag without its value, or a value for a boolean, is an error", () => {
    fails(["--nodes"], "--nodes needs a value");
    fails(["-N"], "-N needs a value");
    fails(["--nodes", "--label"], "--nodes needs a value");
    fails(["--nodes="], "--nodes needs a value");
    fails(["--label=yes"], "--label takes no value");
    expect(parse("x", args, ["--nodes", "-1"]).nodes).toBe("-1");
  });

  test("extra arguments are an error", () => {
    fails(["1", "2"], 'unexpected argument "2"');
  });

  test("--no-X only for flags that say so; repeated flags keep the last, or all", () => {
    expect(parse("x", args, ["--no-payoff"]).payoff).toBe(false);
    fails(["--no-label"], "unknown flag --no-label");
    expect(parse("x", args, ["-N", "1", "-N", "2"]).nodes).toBe("2");
    expect(parse("x", args, ["--policy", "a", "--policy=b"]).policy).toEqual(["a", "b"]);
    expect(parse("x", args, []).policy).toEqual([]);
  });

  test("stopAtPositional: flags end at the program; -- ends them anywhere", () => {
    const r = parse("run", args, ["-N", "2", "ls", "-l", "--bogus"], { stopAtPositional: true });
    expect([r.nodes, r._]).toEqual(["2", ["ls", "-l", "--bogus"]]);
    expect(() => parse("run", args, ["--account", "lab", "hostname"], { stopAtPositional: true })).toThrow("unknown flag --account");
    expect(parse("x", args, ["--", "-l"])._).toEqual(["-l"]);
  });

  test("--help anywhere before the program asks for help", () => {
    expect(parse("x", args, ["--bogus-later", "-h"].reverse()).help).toBe(true);
    expect(parse("run", args, ["ls", "--help"], { stopAtPositional: true }).help).toBeUndefined();
  });

  test("closest", () => {
    expect(closest("sumbit", ["submit", "queue"])).toBe("submit");
    expect(closest("zzzzzz", ["submit", "queue"])).toBeUndefined();
  });

  test("help keeps citty's layout and has no colour codes off a terminal", () => {
    const text = renderUsage({ meta: { name: "x", description: "Does x" }, args, run: () => {} }, "1.2.3");
    expect(text).toStartWith("Does x (ebb x v1.2.3)\n\nUSAGE ebb x [OPTIONS] [JOBID]\n");
    expect(text).toContain("  -N, --nodes=<N>");
    expect(text).toContain("  --no-payoff");
    expect(text).not.toContain("\x1b[");
  });

  test("help wraps to the width: at spaces, a long word after | or , else where it must; descriptions under their column", () => {
    expect(wrap("aa bb cc dd", 5)).toEqual(["aa bb", "cc dd"]);
    expect(wrap("run|submit|queue|show", 12)).toEqual(["run|submit|", "queue|show"]);
    expect(wrap("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
    expect(wrap("\x1b[36mabc\x1b[39m de", 6)).toEqual(["\x1b[36mabc\x1b[39m de"]);
    const text = renderUsage({ meta: { name: "x", description: "Does x" }, args, run: () => {} }, "1.2.3", 50);
    for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(50);
  });
});

describe("batch script directives", () => {
  test("#EBB lines are strict and name their line", () => {
    const script = "#!/bin/sh\n#EBB -N 2\n\n#EBB --bogus\necho hi\n";
    expect(() => scriptFlags(script, jobArgs, "job.sh")).toThrow("job.sh line 4: #EBB --bogus: unknown flag --bogus");
    expect(() => scriptFlags("#EBB -N\n", jobArgs, "j")).toThrow("j line 1: #EBB -N: -N needs a value");
    expect(() => scriptFlags("#EBB -N 2 extra\n", jobArgs, "j")).toThrow('j line 1: #EBB -N 2 extra: unexpected argument "extra"');
  });

  test("later lines win, and reading stops at the first command", () => {
    const r = scriptFlags("#!/bin/sh\n#EBB -N 2 -t 5\n#EBB --nodes=3 # a comment\necho\n#EBB --bogus\n", jobArgs, "j");
    expect(r.flags).toMatchObject({ nodes: "3", time: "5" });
    expect(r.kind).toBe("EBB");
  });

  test("#SBATCH lines count when there is no #EBB line; flags ebb does not have are listed", () => {
    const script = ["#!/bin/bash", "#SBATCH --job-name=sl", "#SBATCH -p debug", "#SBATCH --mem=4G -N 2", "#SBATCH --exclusive", "#SBATCH --ntasks-per-node=2", "#SBATCH --mail-type=END", "srun hostname"].join("\n");
    const r = scriptFlags(script, jobArgs, "s.sh");
    expect(r.kind).toBe("SBATCH");
    expect(r.flags).toMatchObject({ "job-name": "sl", partition: "debug", nodes: "2", "tasks-per-node": "2", mem: "4G", exclusive: true, "mail-type": "END" });
    expect(r.ignored).toEqual([]);
    const both = scriptFlags("#EBB -N 1\n#SBATCH -N 4\n", jobArgs, "b");
    expect([both.kind, both.flags.nodes]).toEqual(["EBB", "1"]);
  });

  test("#SBATCH lines are read as sbatch's getopt reads them: a long flag cut to a prefix only it has", () => {
    // sbatch 22.05 took `--tasks=1` for --tasks-per-node=1 (SLURM_NTASKS_PER_NODE=1), and refused --ntasks-per=2.
    expect(scriptFlags("#SBATCH --tasks=1\n#SBATCH --job=x --chd /tmp\n", jobArgs, "s").flags).toMatchObject({ "tasks-per-node": "1", "job-name": "x", chdir: "/tmp" });
    expect(() => scriptFlags("#SBATCH --ntasks-per=2\n", jobArgs, "s")).toThrow("s line 1: #SBATCH --ntasks-per=2: --ntasks-per is ambiguous: it may be --ntasks-per-core, --ntasks-per-gpu, --ntasks-per-node, --ntasks-per-socket");
    expect(scriptFlags("#SBATCH --mem=4G --acco=x --no-requeue\n", jobArgs, "s")).toMatchObject({ flags: { mem: "4G", requeue: false }, ignored: ["--account=x (line 1: ebb keeps no accounts)"] });
  });

  test("#SBATCH flags that would change the job and that ebb does not have are refused with the reason; unknown ones too", () => {
    const refused = (line: string) => {
      try {
        scriptFlags(`#!/bin/bash\n#SBATCH ${line}\necho\n`, jobArgs, "s.sh");
        return "accepted";
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(refused("--deadline=now+1hour")).toBe("s.sh line 2: #SBATCH --deadline=now+1hour: --deadline=now+1hour: ebb has no deadlines; a job ends at its --time");
    // -m is a flag of ebb submit's: its steps' default (SLURM_DISTRIBUTION); see distribution.test.ts.
    expect(scriptFlags("#SBATCH -m cyclic\n#SBATCH --distribution=plane=4\n", jobArgs, "s").flags).toMatchObject({ distribution: "plane=4" });
    // --no-kill changes only what a node failure does: accepted, and listed with why.
    expect(refused("--no-kill")).toBe("accepted");
    expect(scriptFlags("#SBATCH --no-kill\n", jobArgs, "s").ignored).toEqual(["--no-kill (line 1: a job whose node fails ends NODE_FAIL (or is requeued with --requeue))"]);
    expect(refused("--kill-on-invalid-dep=no")).toBe("accepted");
    expect(refused("--kill-on-invalid-dep=yes")).toBe("accepted");
    expect(refused("--frobnicate=3")).toBe("s.sh line 2: #SBATCH --frobnicate=3: unknown flag --frobnicate: neither sbatch nor ebb has it");
  });

  test("Slurm's values with a meaning of their own: --time=0 (no limit of the job's own), --gres=gpu:0 and none (no GPUs), --exclusive=user (listed with why), --exclusive=mcs (refused)", () => {
    const read = (line: string) => {
      const r = scriptFlags(`#!/bin/bash\n#SBATCH ${line}\necho\n`, jobArgs, "s.sh");
      return { ...jobSubmit(r.flags, "", "s.sh"), ignored: r.ignored };
    };
    for (const t of ["0", "00:00:00", "UNLIMITED", "infinite"]) expect(read(`--time=${t}`).timeLimit).toBe("UNLIMITED");
    expect(read("--time=0-00:30").timeLimit).toBe(1800);
    for (const g of ["gpu:0", "gpu:a100:0", "none"]) expect(read(`--gres=${g}`)).toMatchObject({ gpusPerNode: undefined, gpuType: undefined });
    expect(read("--gres=gpu:0 --gpus-per-node=2").gpusPerNode).toBe(2);
    const user = read("--exclusive=user");
    expect([user.exclusive, user.ignored]).toEqual([undefined, ["--exclusive=user (line 2: ebb does not keep other users' jobs off a job's nodes, it confines each job to its own cores, memory and GPUs; --exclusive gives whole nodes)"]]);
    expect(read("--exclusive").exclusive).toBe(true);
    expect(() => read("--exclusive=mcs")).toThrow("s.sh line 2: #SBATCH --exclusive=mcs: --exclusive=mcs: ebb has no MCS labels; --exclusive gives whole nodes");
  });

  test("every flag of sbatch 22.05 is ebb's, or has its fate and reason", () => {
    const ebbNames = new Set(Object.entries(jobArgs).flatMap(([n, d]) => [n, ...("alias" in d && d.alias !== undefined ? [d.alias].flat() : [])]));
    const submitOnly = new Set(["wrap", "wait", "test-only", "parsable", "help"]);
    const missing = SBATCH_LONG_FLAGS.filter((f) => !ebbNames.has(f) && !(f.startsWith("no-") && ebbNames.has(f.slice(3))) && !SBATCH_ONLY[f] && !submitOnly.has(f));
    expect(missing).toEqual([]);
    for (const [name, e] of Object.entries(SBATCH_ONLY)) expect([name, [e.same, e.ignore, e.refuse].filter((w) => w !== undefined).length]).toEqual([name, 1]);
  });

  test("a real sbatch script's cores, memory and GPUs become its request", () => {
    const script = ["#!/bin/bash", "#SBATCH --nodes=1 --ntasks=1 --cpus-per-task=20 --mem=300G --gres=gpu:2", "#SBATCH --time=12:00:00", "python train.py"].join("\n");
    const r = scriptFlags(script, jobArgs, "train.sh");
    expect(r.ignored).toEqual([]);
    const submit = jobSubmit(r.flags, script, "train.sh");
    expect(submit).toMatchObject({ nodes: 1, tasks: 1, cpusPerTask: 20, mem: 300 * 1024, gpusPerNode: 2, timeLimit: 12 * 3600 });
    expect(requestFrom(submit)).toEqual({ nodes: 1, tasks: 1, cpusPerTask: 20, cpusPerTaskSet: true, memPerNodeMiB: 307200, gpusPerNode: 2, exclusive: false });
    // A GPU script's per-GPU cores and memory (refused before: public scripts use them often).
    const gpu = scriptFlags("#!/bin/bash\n#SBATCH --gres=gpu:2\n#SBATCH --cpus-per-gpu=8\n#SBATCH --mem-per-gpu=29G\npython run.py\n", jobArgs, "s");
    expect(gpu.ignored).toEqual([]);
    expect(requestFrom(jobSubmit(gpu.flags, "", "s"))).toEqual({ tasks: 1, cpusPerTask: 16, memPerNodeMiB: 58 * 1024, gpusPerNode: 2, cpusPerGpu: 8, memPerGpuMiB: 29 * 1024, exclusive: false });
    const min = scriptFlags("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --mincpus=24\n#SBATCH --mem=100G\n", jobArgs, "m");
    expect(min.ignored).toEqual([]);
    expect(requestFrom(jobSubmit(min.flags, "", "m"))).toEqual({ nodes: 1, tasks: 1, cpusPerTask: 24, minCpus: 24, memPerNodeMiB: 100 * 1024, exclusive: false });
    const ebb = scriptFlags("#EBB -n 4 -c 2 --mem-per-cpu 512M --gpus-per-task a100:1 -C ib&avx512 --exclusive\n", jobArgs, "e");
    expect(requestFrom(jobSubmit(ebb.flags, "", "e"))).toEqual({ tasks: 4, cpusPerTask: 2, cpusPerTaskSet: true, memPerCpuMiB: 512, gpusPerTask: 1, gpuType: "a100", constraint: ["ib", "avx512"], exclusive: true });
  });

  test("resource flags: sizes, GPU types, features, and clear errors naming the flag", () => {
    expect(resourceFields({ mem: "1.5G", gpus: "v100:8" })).toMatchObject({ mem: 1536, gpus: 8, gpuType: "v100" });
    expect(resourceFields({ gres: "gpu:a100:4" })).toMatchObject({ gpusPerNode: 4, gpuType: "a100" });
    expect(resourceFields({ gres: "gpu" })).toMatchObject({ gpusPerNode: 1 });
    expect(resourceFields({ "mem-per-cpu": "2048" })).toMatchObject({ memPerCpu: 2048 });
    const bad: [Record<string, string>, string][] = [
      [{ mem: "lots" }, '--mem lots: "lots" is not a memory size'],
      [{ mem: "4G", "mem-per-cpu": "1G" }, "give one of --mem (per node), --mem-per-cpu and --mem-per-gpu, not --mem and --mem-per-cpu"],
      [{ gres: "gpu:1", "mem-per-cpu": "1G", "mem-per-gpu": "1G" }, "give one of --mem (per node), --mem-per-cpu and --mem-per-gpu, not --mem-per-cpu and --mem-per-gpu"],
      [{ gres: "gpu:1", "cpus-per-task": "2", "cpus-per-gpu": "4" }, "give --cpus-per-task or --cpus-per-gpu, not both"],
      [{ "cpus-per-gpu": "4" }, "--cpus-per-gpu counts per GPU: give the GPUs too"],
      [{ "mem-per-gpu": "4G" }, "--mem-per-gpu counts per GPU: give the GPUs too"],
      [{ gres: "gpu:2", "gpus-per-node": "2" }, "give --gres gpu:N or --gpus-per-node N, not both"],
      [{ gpus: "2", "gpus-per-task": "1" }, "--gpus, --gpus-per-task disagree: 1 per task on 1 task is 1, not 2; give one of them"],
      [{ gres: "mps:100" }, '--gres: "mps" is not a resource ebb knows; only gpu is'],
      [{ gpus: "two" }, "--gpus two: expected a whole number"],
      [{ "gpus-per-node": "a:b:2" }, "--gpus-per-node a:b:2: expected a count, or TYPE:COUNT"],
      [{ constraint: "ib|eth" }, "--constraint ib|eth: ebb takes features that must all be present"],
      [{ "cpus-per-task": "0" }, "--cpus-per-task 0: must be at least 1"],
    ];
    for (const [flags, message] of bad) expect(() => resourceFields(flags)).toThrow(message);
    // Several GPU counts that agree (a public script's --gpus-per-node=1 --gpus=1 --gpus-per-task=1): the most particular.
    expect(resourceFields({ "gpus-per-node": "1", gpus: "1", "gpus-per-task": "1" })).toMatchObject({ gpus: undefined, gpusPerNode: undefined, gpusPerTask: 1 });
    expect(resourceFields({ gres: "gpu:a100:4", gpus: "8" }, { nodes: 2 })).toMatchObject({ gpus: undefined, gpusPerNode: 4, gpuType: "a100" });
    expect(resourceFields({ "gpus-per-node": "4", "gpus-per-task": "1" }, { nodes: 2, tasksPerNode: 4 })).toMatchObject({ gpusPerNode: undefined, gpusPerTask: 1 });
    expect(() => resourceFields({ "gpus-per-node": "4", gpus: "4" }, { nodes: 2 })).toThrow("--gpus, --gpus-per-node disagree: 4 per node on 2 nodes is 8, not 4; give one of them");
    expect(() => resourceFields({ "gpus-per-node": "2", "gpus-per-task": "1" }, { tasks: 4 })).toThrow("give one of --gpus-per-node, --gpus-per-task: ebb cannot tell");
    // Slurm's --mem=0, all of each node's memory: whole nodes, said unless --exclusive says it already.
    expect(resourceFields({ mem: "0" })).toMatchObject({ mem: undefined, exclusive: true });
    expect(allMemoryWarning({ mem: "0G" })).toBe("--mem=0G (all of each node's memory): the job gets its nodes whole, as with --exclusive");
    expect(allMemoryWarning({ mem: "0", exclusive: true })).toBeUndefined();
    expect(allMemoryWarning({ mem: "100" })).toBeUndefined();
    expect(() => parse("submit", jobArgs, ["--gres=gpu:2", "-c", "4", "--exclusive"])).not.toThrow();
  });

  test("--ntasks-per-gpu: GPUs for a task count, or tasks for a GPU count; each task shown one GPU; not with --gpus-per-task or --ntasks-per-node", () => {
    // -n 8 --ntasks-per-gpu 2: 4 GPUs for the job; --gpus 3 (or 2 a node on 2 nodes) and no -n: 6 (8) tasks.
    expect(tasksPerGpuFlag({ "ntasks-per-gpu": "2" }, { tasks: 8 })).toEqual({ tasksPerGpu: 2, gpus: 4 });
    expect(tasksPerGpuFlag({ "ntasks-per-gpu": "4" }, { tasks: 6 })).toEqual({ tasksPerGpu: 4, gpus: 2 });
    expect(tasksPerGpuFlag({ "ntasks-per-gpu": "2", gpus: "a100:3" })).toEqual({ tasksPerGpu: 2, tasks: 6 });
    expect(tasksPerGpuFlag({ "ntasks-per-gpu": "2", gres: "gpu:2" }, { nodes: 2 })).toEqual({ tasksPerGpu: 2, tasks: 8 });
    expect(tasksPerGpuFlag({ "ntasks-per-gpu": "2", gpus: "4" }, { tasks: 6 })).toEqual({ tasksPerGpu: 2 });
    expect(tasksPerGpuFlag({})).toEqual({});
    expect(resourceFields({ "ntasks-per-gpu": "2" }, { tasks: 8 })).toMatchObject({ gpus: 4 });
    expect(resourceFields({ "ntasks-per-gpu": "2", gpus: "2" })).toMatchObject({ gpus: 2 });
    expect(() => tasksPerGpuFlag({ "ntasks-per-gpu": "1", gpus: "2" }, { tasks: 3 })).toThrow("--ntasks-per-gpu=1: 3 tasks need 3 GPUs, not the 2 asked for");
    expect(() => tasksPerGpuFlag({ "ntasks-per-gpu": "1", "gpus-per-task": "1" })).toThrow("give --ntasks-per-gpu or --gpus-per-task, not both");
    expect(() => tasksPerGpuFlag({ "ntasks-per-gpu": "1" }, { tasksPerNode: 2 })).toThrow("give --ntasks-per-gpu or --ntasks-per-node, not both");
    // An sbatch script's: the tasks and GPUs it implies, and SLURM_NTASKS_PER_GPU for its steps.
    const s = scriptFlags("#!/bin/bash\n#SBATCH --gpus=2\n#SBATCH --ntasks-per-gpu=2\n", jobArgs, "g");
    expect(s.ignored).toEqual([]);
    const sub = jobSubmit(s.flags, "", "g");
    expect(sub).toMatchObject({ tasks: 4, gpus: 2 });
    expect(sub.env?.SLURM_NTASKS_PER_GPU).toBe("2");
    expect(() => jobSubmit({ "ntasks-per-gpu": "2", gpus: "2", nodes: "1-2" }, "", "g")).toThrow("--ntasks-per-gpu takes a node count, not a range");
  });

  test("directives and shell words", () => {
    expect(directives("#!/bin/sh\n#EBB -J 'a b'\n#SBATCH -N 1\n").ebb).toEqual([{ line: 2, words: ["-J", "a b"] }]);
    expect(shellWords(`a "b c" 'd' e\\ f`)).toEqual(["a", "b c", "d", "e f"]);
  });
});
