/**
 * What TLS costs: two local clusters of 2 nodes, one `ebb up` plain and one `ebb up --tls`, used
 * in turns. Figures: `ebb run -N 2 true` (a process start, the launcher's WSS link, two step-port
 * connections) and GET /v1/nodes over one kept-alive connection; the baseline is the plain
 * cluster, in the same run.
 */
import type { Subprocess } from "bun";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, ROOT } from "../test/support/cluster.ts";
import { median, type Bench, type Figure } from "./lib.ts";

const ebb = [process.execPath, "--no-env-file", join(ROOT, "src/main.ts")];

interface Up {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  state: string;
  url: string;
  token: string;
  ca?: string;
}

async function up(dir: string, tls: boolean): Promise<Up> {
  const state = join(dir, tls ? "tls" : "plain");
  const proc = Bun.spawn([...ebb, "up", "--nodes", "2", "--listen", `127.0.0.1:${await freePort()}`, "--state-dir", state, ...(tls ? ["--tls"] : [])], {
    env: { ...process.env, EBB_LOG: "warn" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let text = "";
  const d = new TextDecoder();
  for await (const chunk of proc.stdout) {
    text += d.decode(chunk, { stream: true });
    if (text.includes("Ctrl-C stops the cluster.")) break;
  }
  if (!text.includes("Ctrl-C")) throw new Error(`ebb up${tls ? " --tls" : ""} failed: ${text}${await new Response(proc.stderr).text()}`);
  const read = (f: string) => readFileSync(join(state, f), "utf8").trim();
  return { proc, state, url: read("controller.url"), token: read("token"), ca: tls ? readFileSync(join(state, "ca.pem"), "utf8") : undefined };
}

async function runOnce(u: Up): Promise<number> {
  const t0 = performance.now();
  const p = Bun.spawn([...ebb, "run", "-N", "2", "true"], { env: { ...process.env, EBB_STATE_DIR: u.state, EBB_CONTROLLER: "", EBB_TOKEN: "", EBB_CA: "", EBB_LOG: "warn" }, stdout: "ignore", stderr: "pipe" });
  const code = await p.exited;
  if (code !== 0) throw new Error(`ebb run failed (${code}): ${await new Response(p.stderr).text()}`);
  return performance.now() - t0;
}

async function apiOnce(u: Up, n: number): Promise<number> {
  const init = { headers: { Authorization: `Bearer ${u.token}` }, tls: u.ca ? { ca: u.ca } : undefined } as RequestInit;
  await (await fetch(`${u.url}/v1/nodes`, init)).arrayBuffer();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await (await fetch(`${u.url}/v1/nodes`, init)).arrayBuffer();
  return (performance.now() - t0) / n;
}

export default {
  name: "tls",
  description: "ebb up --tls vs plain: ebb run -N 2 true, and GET /v1/nodes",
  async run({ quick }) {
    const dir = mkdtempSync(join(tmpdir(), "ebb-bench-tls-"));
    const clusters: Up[] = [];
    try {
      const plain = await up(dir, false);
      clusters.push(plain);
      const tls = await up(dir, true);
      clusters.push(tls);
      const reps = quick ? 5 : 15;
      const runs = { plain: [] as number[], tls: [] as number[] };
      const api = { plain: [] as number[], tls: [] as number[] };
      for (let r = 0; r < reps; r++) {
        runs.plain.push(await runOnce(plain));
        runs.tls.push(await runOnce(tls));
        api.plain.push(await apiOnce(plain, 50));
        api.tls.push(await apiOnce(tls, 50));
      }
      const figures: Figure[] = [
        { name: `ebb run -N 2 true (median of ${reps})`, value: median(runs.tls), unit: "ms", baseline: { name: "plain HTTP/WS", value: median(runs.plain) }, better: "lower", goal: "none set; for the record" },
        { name: `GET /v1/nodes, kept-alive (median of ${reps} x 50)`, value: median(api.tls), unit: "ms", baseline: { name: "plain HTTP", value: median(api.plain) }, better: "lower" },
      ];
      return figures;
    } finally {
      for (const c of clusters) {
        c.proc.kill("SIGINT");
        await c.proc.exited;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  },
} satisfies Bench;
