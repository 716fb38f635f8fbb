/**
 * runEpop: the driver bound to ebb/comm. A Bun program defines its program and ends with
 *
 *   await runEpop(program);
 *
 * and is started like any other: `ebb run -N 2 --elastic ... bun prog.ts args`. runEpop calls
 * initAdapt, runs the driver (driver.ts), and finalizes. A rank that leaves in a window exits 0
 * right there. An error in a block prints `epop: <program>: phase "X" (pc N, exec, iteration I)
 * failed on rank R: ...` on stderr and exits 1, which fails the job.
 */
import { adaptBegin, adaptCommit, finalizeAdapt, initAdapt, probeAdapt, reportProgram, type Comm } from "../comm/index.ts";
import { cfgPhase, enableEpopMode } from "../comm/cfg.ts";
import { drive, EpopError, type Counters, type Env, type Progress } from "./driver.ts";
import { structureOf, type Program } from "./program.ts";
import { epopWindow, type EpopWindow } from "./window.ts";

/** Tag of the counters message from old rank 0 to each joining rank. */
const COUNTERS_TAG = 0x7e90_0000;

export interface RunOptions {
  /** Program arguments; default: process.argv after the script. */
  args?: string[];
  /** Called on rank 0 on entering a phase and after each elastic iteration. */
  onProgress?: (p: Progress) => void;
}

/** Runs `program` on this rank; resolves to its final data (exits the process on a leaving rank or a failure). */
export async function runEpop<D>(program: Program<D, Comm, EpopWindow>, opts: RunOptions = {}): Promise<D> {
  const args = opts.args ?? process.argv.slice(2);
  // CFG monitoring in EPOP mode: the phases are the loops, nothing is detected from call sites.
  enableEpopMode();
  let { world, status } = await initAdapt();
  // Rank 0 tells the resource manager the program's structure, then where it is: at each phase
  // change at once, within a phase at most once a second (a PMI command the agent forwards).
  if (world.rank === 0 && status === "new") reportProgram({ structure: JSON.stringify(structureOf(program)) });
  let lastPc = -1;
  let lastSent = 0;
  const report = (p: Progress) => {
    opts.onProgress?.(p);
    const now = performance.now();
    if (p.pc === lastPc && now - lastSent < 1000) return;
    lastPc = p.pc;
    lastSent = now;
    reportProgram({ pc: String(p.pc), iteration: String(p.iteration), ...(p.bound === undefined ? {} : { bound: String(p.bound) }) });
  };
  const env: Env<Comm, EpopWindow> = {
    joining: status === "joining",
    world: () => world,
    probe: async () => (await probeAdapt()).pending,
    window: async (at, block) => {
      const w = await adaptBegin();
      const old = at ? world : null;
      let counters: Counters;
      if (at) {
        counters = at;
        if (world.rank === 0) await Promise.all(Array.from({ length: w.joining }, (_, r) => w.intercomm.send(r, [at.pc, at.iteration], COUNTERS_TAG)));
      } else {
        const [pc, iteration] = (await w.intercomm.recv<[number, number]>(0, COUNTERS_TAG)).data;
        counters = { pc, iteration };
      }
      await block(counters, epopWindow(w, old, counters.pc, counters.iteration));
      const next = await adaptCommit();
      if (!next) return null;
      world = next;
      status = "new";
      return counters;
    },
    progress: (p) => world.rank === 0 && report(p),
    iteration: (pc) => cfgPhase(pc),
  };
  let data: D | null;
  try {
    data = await drive(program, args, env);
  } catch (e) {
    const msg = e instanceof EpopError ? e.message : `rank ${world.rank}: ${e instanceof Error ? e.message : String(e)}`;
    process.stderr.write(`epop: ${program?.name ?? "program"}: ${msg}\n`);
    process.exit(1);
  }
  if (data === null) process.exit(0);
  // Like MPI_Finalize, the end is collective: a rank that is done must not exit while a slower
  // one is still inside a collective that counts it (ebb/comm fails those on the peer's exit).
  await world.barrier();
  await finalizeAdapt();
  return data;
}
