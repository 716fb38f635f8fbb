/**
 * sinfo's lines from ebb's nodes and partitions (cli/sinfo.ts), as sinfo 22.05 prints them on the
 * loopback cluster of test/support/slurm.ts; the side-by-side test compares a script's whole use.
 */
import { describe, expect, test } from "bun:test";
import type { NodeView, PartitionView } from "../../src/api/schemas.ts";
import { sinfoText } from "../../src/cli/sinfo.ts";

const node = (name: string, state: NodeView["state"], held: number): NodeView => ({
  name,
  state,
  cpus: 4,
  memoryMb: 4096,
  gpus: [],
  features: [],
  allocated: { cpus: held, memMiB: held * 1024, gpus: [] },
  free: { cpus: 4 - held, memMiB: (4 - held) * 1024, gpus: [] },
  addr: "127.0.0.1:1",
  jobs: held > 0 ? [1] : [],
  jobId: held > 0 ? 1 : null,
  reason: null,
  drain: null,
  runAs: null,
  host: { state: "free", rule: "", inputs: {}, since: null },
});
const nodes = [node("n1", "ALLOCATED", 4), node("n2", "ALLOCATED", 1), node("n3", "IDLE", 0), node("n4", "DRAINED", 0)];
const partition = (name: string, names: string[], isDefault: boolean, maxTime: number | null) => ({ name, default: isDefault, nodes: names, maxTime }) as PartitionView;
const partitions = [partition("batch", ["n1", "n2", "n3", "n4"], true, null), partition("short", ["n3", "n4"], false, 1800)];

describe("sinfo from ebb's nodes", () => {
  test("the default table: a line per partition and state, widened to the longest partition, allocated, mixed, idle and drained", () => {
    expect(sinfoText([], nodes, partitions)).toBe(
      [
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST",
        "batch*       up   infinite      1  alloc n1",
        "batch*       up   infinite      1    mix n2",
        "batch*       up   infinite      1   idle n3",
        "batch*       up   infinite      1  drain n4",
        "short        up      30:00      1   idle n3",
        "short        up      30:00      1  drain n4",
        "",
      ].join("\n"),
    );
  });

  test("-N: a line per node and partition, sorted by node; -h -o, -p, -t and -n pick lines and columns", () => {
    expect(sinfoText(["-N", "-p", "short"], nodes, partitions)).toBe("NODELIST  NODES PARTITION STATE \nn3            1     short idle  \nn4            1     short drain \n");
    expect(sinfoText(["-h", "-t", "idle,mix", "-o", "%P %D %C %N"], nodes, partitions)).toBe("batch* 1 1/3/0/4 n2\nbatch* 1 0/4/0/4 n3\nshort 1 0/4/0/4 n3\n");
    expect(sinfoText(["-Nh", "-n", "n[1-2]", "-o", "%n|%.6T|%c|%m|%e"], nodes, partitions)).toBe("n1|alloca|4|4096|0\nn2| mixed|4|4096|3072\n");
    // A controller without partitions: every node in one, named as SLURM_JOB_PARTITION names it.
    expect(sinfoText(["-h", "-o", "%P %D"], nodes.slice(0, 1), [])).toBe("all* 1\n");
  });

  test("what ebb's sinfo does not print is refused, naming what it takes", () => {
    expect(() => sinfoText(["--json"], nodes, partitions)).toThrow("--json: ebb's sinfo takes -N, -h, -o, -p, -t and -n; ebb nodes and ebb partitions show this cluster in full");
    expect(() => sinfoText(["-o", "%O"], nodes, partitions)).toThrow("--format=%O: %O is not one ebb's sinfo prints");
    expect(() => sinfoText(["-p"], nodes, partitions)).toThrow("-p needs a value");
  });
});
