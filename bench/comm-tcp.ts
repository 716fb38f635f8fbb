/**
 * ebb/comm over TCP alone: a 2-rank ping-pong (64 KiB, 1 MiB, 4 MiB) between two processes on
 * different node names, so their traffic goes over TCP on loopback, started by the test launcher
 * (no cluster). Rounds alternate, in this order: ebb/comm as it is (large bodies read directly,
 * src/comm/direct.ts), ebb/comm with EBB_COMM_DIRECT=0 (every byte through Bun's reads), the same
 * ping-pong in C on the same loopback (programs/tcp-pingpong.c: blocking send, recv(MSG_WAITALL)),
 * and Bun's own sockets streaming 4 MiB writes (programs/tcp-floor.ts). Figures are medians over
 * the rounds (5, or 3 with --quick); the machine's load average is printed with them, since on a
 * shared 2-core machine every one of these figures is mostly the scheduler's.
 */
import { readFileSync } from "node:fs";
import { compileC } from "../test/support/mpi.ts";
import { launch } from "../test/support/comm-launcher.ts";
import { runCommand } from "./cluster.ts";
import { type Bench, type Figure, median } from "./lib.ts";

const PROGRAM = new URL("programs/tcp-pingpong.ts", import.meta.url).pathname;
const TCP_FLOOR = new URL("programs/tcp-floor.ts", import.meta.url).pathname;
const SIZES = [65536, 1048576, 4194304];

/** MB/s per size, and each rank's CPU share per size, from the programs' lines. */
interface Run {
  mbs: Map<number, number>;
  cpu: Map<number, number[]>;
}

function parse(out: string): Run {
  const r: Run = { mbs: new Map(), cpu: new Map() };
  for (const m of out.matchAll(/^pingpong bytes=(\d+) us=([\d.]+)/gm)) r.mbs.set(Number(m[1]), Number(m[1]) / Number(m[2]));
  for (const m of out.matchAll(/^cpu pingpong bytes=(\d+) rank=(\d+) pct=([\d.]+)/gm)) {
    const list = r.cpu.get(Number(m[1])) ?? [];
    list[Number(m[2])] = Number(m[3]);
    r.cpu.set(Number(m[1]), list);
  }
  return r;
}

async function ebb(env: Record<string, string>): Promise<Run> {
  const results = await launch({ program: PROGRAM, n: 2, nodes: 2, deadlineMs: 300_000, env });
  for (const res of results) if (res.code !== 0) throw new Error(`${res.name} of the ping-pong failed (${res.code ?? res.signal}): ${res.stderr}`);
  return parse(results.map((res) => res.stdout).join("\n"));
}

const load = async () => Number((await Bun.file("/proc/loadavg").text()).split(" ")[0]);

export default {
  name: "comm-tcp",
  description: "ebb/comm TCP ping-pong (direct reads) vs Bun's reads, C and Bun's sockets on the same loopback",
  async run({ quick }) {
    const c = await compileC("bench-tcp-pingpong", readFileSync(new URL("programs/tcp-pingpong.c", import.meta.url), "utf8"), { cc: "cc", flags: ["-O2"] });
    if (!c) throw new Error("a C compiler (cc) is needed for this benchmark");
    const rounds = quick ? 3 : 5;
    const runs = { direct: [] as Run[], bun: [] as Run[], c: [] as Run[], floor: [] as number[], load: [] as number[] };
    for (let i = 0; i < rounds; i++) {
      runs.load.push(await load());
      runs.direct.push(await ebb({}));
      runs.bun.push(await ebb({ EBB_COMM_DIRECT: "0" }));
      runs.c.push(parse((await runCommand([c], process.env as Record<string, string>)).out));
      const floor = /tcp-floor bytes=\d+ MB\/s=(\d+)/.exec((await runCommand([process.execPath, TCP_FLOOR], process.env as Record<string, string>)).out);
      runs.floor.push(Number(floor?.[1] ?? Number.NaN));
      process.stderr.write(`  round ${i + 1}/${rounds}: 4 MiB ${runs.direct[i]!.mbs.get(4194304)?.toFixed(0)} MB/s direct, ${runs.bun[i]!.mbs.get(4194304)?.toFixed(0)} Bun reads, ${runs.c[i]!.mbs.get(4194304)?.toFixed(0)} C, ${runs.floor[i]} Bun streaming (load ${runs.load[i]})\n`);
    }
    runs.load.push(await load());
    const mbs = (list: Run[], n: number) => median(list.map((r) => r.mbs.get(n) ?? Number.NaN));
    const cpu = (list: Run[], n: number) => [0, 1].map((rank) => `${median(list.map((r) => r.cpu.get(n)?.[rank] ?? Number.NaN)).toFixed(0)}%`).join(" ");
    const figures: Figure[] = [];
    const size = (n: number) => (n >= 1048576 ? `${n >> 20} MiB` : `${n >> 10} KiB`);
    for (const n of SIZES) {
      const name = `TCP ping-pong ${size(n)}, ebb/comm direct reads`;
      const value = mbs(runs.direct, n);
      const base = { name: "ebb/comm, Bun's reads (EBB_COMM_DIRECT=0)", value: mbs(runs.bun, n) };
      const f: Figure = { name, value, unit: "MB/s", baseline: base, better: "higher", cpu: `${cpu(runs.direct, n)} | ${cpu(runs.bun, n)}` };
      figures.push(n === 4194304 ? { ...f, goal: ">= 2000 MB/s", met: value >= 2000 } : f);
      figures.push({ name: `${name} vs C`, value, unit: "MB/s", baseline: { name: "C, same ping-pong (tcp-pingpong.c)", value: mbs(runs.c, n) }, better: "higher", cpu: `${cpu(runs.direct, n)} | ${cpu(runs.c, n)}` });
    }
    figures.push({ name: "TCP 4 MiB, ebb/comm direct reads vs Bun's sockets alone", value: mbs(runs.direct, 4194304), unit: "MB/s", baseline: { name: "Bun.listen/Bun.connect streaming 4 MiB writes (tcp-floor.ts)", value: median(runs.floor) }, better: "higher" });
    figures.push({ name: `load average (1 min) over the ${rounds} rounds, median (min-max ${Math.min(...runs.load)}-${Math.max(...runs.load)})`, value: median(runs.load), unit: "", better: "lower" });
    return figures;
  },
} satisfies Bench;
