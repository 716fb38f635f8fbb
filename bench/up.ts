/**
 * `ebb up --hosts` on 1, 2 and 4 ssh "hosts" (real sshd on 127.0.0.2-5): time from the command to
 * every agent registered (the banner), the binary already in place; baseline, the same number of
 * `ssh HOST true` in parallel (the floor: one login per host). Also once with the binary copy.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SshHosts } from "../test/support/sshd.ts";
import { compiledEbb } from "./cluster.ts";
import { median, type Bench, type Figure } from "./lib.ts";

async function sshFloor(hosts: SshHosts, n: number): Promise<number> {
  const t0 = performance.now();
  const procs = Array.from({ length: n }, (_, i) => Bun.spawn(["ssh", "-F", hosts.config, "-o", "BatchMode=yes", `h${i + 1}`, "true"], { stdout: "ignore", stderr: "inherit" }));
  const codes = await Promise.all(procs.map((p) => p.exited));
  if (codes.some((c) => c !== 0)) throw new Error(`ssh true failed: ${codes.join(",")}`);
  return performance.now() - t0;
}

async function upTime(ebb: string[], hosts: SshHosts, n: number, remotePath: string, dir: string): Promise<number> {
  const names = Array.from({ length: n }, (_, i) => `h${i + 1}`).join(",");
  const t0 = performance.now();
  const up = Bun.spawn([...ebb, "up", "--hosts", names, "--ssh-opts", `-F ${hosts.config}`, "--remote-path", remotePath, "--listen", "127.0.0.1:0", "--state-dir", join(dir, "state")], {
    env: { ...process.env, EBB_LOG: "warn" },
    stdout: "pipe",
    stderr: "pipe",
  });
  let text = "";
  const d = new TextDecoder();
  for await (const chunk of up.stdout) {
    text += d.decode(chunk, { stream: true });
    if (text.includes("ebb cluster is up")) break;
  }
  const elapsed = performance.now() - t0;
  if (!text.includes(`ebb cluster is up: ${n} of ${n} hosts`)) throw new Error(`ebb up failed: ${text}${await new Response(up.stderr).text()}`);
  up.kill("SIGINT");
  await up.exited;
  return elapsed;
}

export default {
  name: "up",
  description: "ebb up --hosts to all agents registered, vs the same ssh logins in parallel",
  async run({ quick }) {
    const ebb = await compiledEbb();
    const hosts = await new SshHosts(["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]).start();
    const dir = mkdtempSync(join(tmpdir(), "ebb-bench-up-"));
    const remotePath = join(dir, "remote", "ebb");
    const reps = quick ? 2 : 5;
    const figures: Figure[] = [];
    try {
      const cold = await upTime(ebb, hosts, 1, remotePath, dir);
      figures.push({ name: "1 host, binary copied first", value: cold, unit: "ms", baseline: { name: "ssh true", value: await sshFloor(hosts, 1) }, better: "lower" });
      for (const n of [1, 2, 4]) {
        const floor: number[] = [];
        const ours: number[] = [];
        for (let r = 0; r < reps; r++) {
          floor.push(await sshFloor(hosts, n));
          ours.push(await upTime(ebb, hosts, n, remotePath, dir));
        }
        const value = median(ours);
        const base = median(floor);
        figures.push({ name: `${n} host(s), binary in place (median of ${reps})`, value, unit: "ms", baseline: { name: `${n} x ssh true in parallel`, value: base }, better: "lower", goal: "<= 1.5x the floor", met: value <= 1.5 * base });
      }
      return figures;
    } finally {
      await hosts.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
} satisfies Bench;
