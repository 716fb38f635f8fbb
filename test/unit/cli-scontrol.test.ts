/**
 * scontrol's host-list words in an ebb job (cli/scontrol.ts), each expected output as scontrol
 * 22.05 printed it on the loopback Slurm of test/support/slurm.ts.
 */
import { describe, expect, test } from "bun:test";
import { scontrolShow } from "../../src/cli/scontrol.ts";
import { relativeLimit, scontrolUpdate } from "../../src/cli/scontrol-update.ts";

const job = { SLURM_JOB_NODELIST: "n[1-2]" };
const show = (line: string, env: Record<string, string> = job) => scontrolShow(line.split(" "), env);
const refusal = (line: string, env: Record<string, string> = job) => {
  try {
    return show(line, env);
  } catch (e) {
    return (e as Error).message;
  }
};

describe("scontrol in an ebb job", () => {
  test("show hostnames: one name a line, the job's nodes by default, any case and scontrol's abbreviations", () => {
    expect(scontrolShow(["show", "hostnames"], job)).toBe("n1\nn2\n");
    expect(show("show hostnames n[1-3],x5")).toBe("n1\nn2\nn3\nx5\n");
    expect(show("show hostname n[01-02]")).toBe("n01\nn02\n");
    expect(show("SHOW HOSTN n[1-2]")).toBe("n1\nn2\n");
  });

  test("show hostlist keeps the names' order, hostlistsorted sorts them", () => {
    expect(show("show hostlist n3,n1,n2,x5")).toBe("n[3,1-2],x5\n");
    expect(show("sho hostl n1,n2")).toBe("n[1-2]\n");
    expect(show("show hostlist n07,n08,n10")).toBe("n[07-08,10]\n");
    expect(show("show hostlistsorted n3,n1,n2")).toBe("n[1-3]\n");
  });

  test("what it cannot do is refused naming ebb's command", () => {
    expect(refusal("update JobId=12 TimeLimit=5")).toContain("ebb show JOBID shows a job in full");
    expect(refusal("show hostnames", {})).toBe("show hostnames: no list given and SLURM_JOB_NODELIST is not set");
    expect(refusal("show hostnames a b")).toBe("show hostnames: one list, not 2 (join them with commas)");
    expect(refusal("show hostnames n[2-1]")).toContain("n[2-1]: ");
  });
});

test("scontrol update: JobId= and TimeLimit=, JobName= (Name=), Dependency=, NumNodes=MIN[-MAX], Partition= in any case; +N/-N minutes; other keys refused naming them", () => {
  expect(scontrolUpdate(["jobid=12", "TimeLimit=1:00:00", "Name=next", "dependency="])).toEqual({ id: "12", timeLimit: "1:00:00", name: "next", dependency: "" });
  expect(relativeLimit("-10", 3600)).toBe(3000);
  expect(relativeLimit("+5", 60)).toBe(360);
  expect(relativeLimit("UNLIMITED", 60)).toBe("UNLIMITED");
  const refusal = (words: string[]) => {
    try {
      scontrolUpdate(words);
    } catch (e) {
      return (e as Error).message;
    }
  };
  expect(scontrolUpdate(["JobId=12", "NumNodes=4"])).toEqual({ id: "12", minNodes: 4 });
  expect(scontrolUpdate(["JobId=12", "numnodes=2-3", "Partition=development"])).toEqual({ id: "12", minNodes: 2, maxNodes: 3, partition: "development" });
  expect(refusal(["JobId=12", "NumNodes=3-2"])).toBe("NumNodes=3-2: expected a node count or MIN-MAX (Node count specification invalid)");
  expect(refusal(["JobId=12", "NumNodes=0"])).toBe("NumNodes=0: expected a node count or MIN-MAX (Node count specification invalid)");
  expect(refusal(["JobId=12", "NumCPUs=4"])).toBe("Update of this parameter is not supported: NumCPUs=4 (ebb does not change a job's CPUs once submitted)");
  expect(refusal(["JobId=12", "Reboot=yes"])).toBe("Update of this parameter is not supported: Reboot=yes (ebb's scontrol updates a job's TimeLimit, JobName, Dependency, NumNodes and Partition)");
  expect(refusal(["TimeLimit=5"])).toBe("update: give JobId=ID (scontrol update JobId=$SLURM_JOB_ID TimeLimit=...)");
});
