/**
 * The EPOP driver loop (dissertation Listing 7.3), independent of how ranks talk: `drive` runs
 * init, then the phases by program counter; in an elastic phase it asks `env.probe()` once per
 * iteration and, when an adaptation is pending, hands the phase's adapt block to `env.window`.
 * A joining rank starts in `env.window` with no counters: the window gives it the program counter
 * and iteration the staying ranks were at, it runs that phase's adapt block, then continues the
 * phase from that iteration (probe, exec, ...) like everyone else. run.ts binds env to ebb/comm.
 */
import { validateProgram, type Phase, type PhaseContext, type Program, type WorldLike } from "./program.ts";

export interface Counters {
  pc: number;
  iteration: number;
}

export interface Progress {
  pc: number;
  phase: string;
  kind: "rigid" | "elastic" | "branch";
  /** Iterations of the current phase completed. */
  iteration: number;
  /** The elastic phase's declared bound, if any. */
  bound: number | undefined;
}

export interface Env<W extends WorldLike, X> {
  /** Started by a grow: the first thing it does is the window. */
  joining: boolean;
  world(): W;
  /** Is an adaptation pending? Called once per elastic iteration on every rank. */
  probe(): Promise<boolean>;
  /**
   * Runs one adaptation window. `at` is this rank's counters (null on a joining rank, which gets
   * them from the staying ranks); `block` runs the adapt block of the phase at those counters.
   * Resolves to the counters to continue from, or null when this rank left.
   */
  window(at: Counters | null, block: (at: Counters, w: X) => Promise<void>): Promise<Counters | null>;
  /** Called on entering a phase and after each elastic iteration. */
  progress?(p: Progress): void;
  /** Called on every rank before each exec of a rigid or elastic phase (the CFG's EPOP mode). */
  iteration?(pc: number): void;
}

/** A failure inside a block, naming the phase, its program counter, the iteration and the rank. */
export class EpopError extends Error {
  override readonly name = "EpopError";
  constructor(
    readonly phase: string,
    readonly pc: number,
    readonly rank: number,
    readonly iteration: number | undefined,
    readonly block: string,
    override readonly cause: unknown,
  ) {
    const where = phase === "init" ? "init" : `phase "${phase}" (pc ${pc}, ${block}${iteration === undefined ? "" : `, iteration ${iteration}`})`;
    super(`${where} failed on rank ${rank}: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** Runs `program`; resolves to the final data block, or null on a rank that left in a window. */
export async function drive<D, W extends WorldLike, X>(program: Program<D, W, X>, args: string[], env: Env<W, X>): Promise<D | null> {
  validateProgram(program as Program<unknown, WorldLike, unknown>);
  const phases = program.phases;
  const end = phases.length + 1;
  const guard = async <T>(ph: { name: string }, pc: number, iteration: number | undefined, block: string, f: () => T | Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (e) {
      if (e instanceof EpopError) throw e;
      throw new EpopError(ph.name, pc, env.world().rank, iteration, block, e);
    }
  };
  const ctx = (ph: Phase<D, W, X>, pc: number, iteration: number): PhaseContext<W> => {
    const world = env.world();
    return { world, rank: world.rank, size: world.size, phase: ph.name, pc, iteration };
  };

  const w0 = env.world();
  const data = await guard({ name: "init" }, 0, undefined, "init", () => program.init(args, { world: w0, rank: w0.rank, size: w0.size, joining: env.joining }));

  const adaptBlock = async (at: Counters, w: X): Promise<void> => {
    const ph = phases[at.pc - 1];
    if (!ph || ph.kind !== "elastic") throw new EpopError(ph?.name ?? "?", at.pc, env.world().rank, at.iteration, "adapt", new Error(`an adaptation window at pc ${at.pc}, which is not an elastic phase`));
    await guard(ph, at.pc, at.iteration, "adapt", () => ph.adapt(data, w));
  };

  let pc = 1;
  let iteration = 0;
  let resumed = false;
  if (env.joining) {
    const at = await env.window(null, adaptBlock);
    if (!at) return null;
    ({ pc, iteration } = at);
    resumed = true;
  }

  while (pc < end) {
    const ph = phases[pc - 1]!;
    if (!resumed) iteration = 0;
    resumed = false;
    switch (ph.kind) {
      case "rigid":
        env.progress?.({ pc, phase: ph.name, kind: ph.kind, iteration, bound: undefined });
        for (;;) {
          env.iteration?.(pc);
          await guard(ph, pc, iteration, "exec", () => ph.exec(data, ctx(ph, pc, iteration)));
          iteration++;
          if (!ph.loop || !(await guard(ph, pc, iteration, "loop", () => ph.loop!(data, ctx(ph, pc, iteration))))) break;
        }
        pc++;
        break;
      case "elastic": {
        const bound = () => (ph.bound ? ph.bound(data) : undefined);
        env.progress?.({ pc, phase: ph.name, kind: ph.kind, iteration, bound: bound() });
        for (;;) {
          if (await env.probe()) {
            const at = await env.window({ pc, iteration }, adaptBlock);
            if (!at) return null;
          }
          env.iteration?.(pc);
          await guard(ph, pc, iteration, "exec", () => ph.exec(data, ctx(ph, pc, iteration)));
          iteration++;
          env.progress?.({ pc, phase: ph.name, kind: ph.kind, iteration, bound: bound() });
          if (!(await guard(ph, pc, iteration, "loop", () => ph.loop(data, ctx(ph, pc, iteration))))) break;
        }
        pc++;
        break;
      }
      case "branch": {
        env.progress?.({ pc, phase: ph.name, kind: ph.kind, iteration: 0, bound: undefined });
        const target = await guard(ph, pc, undefined, "next", () => ph.next(data, pc));
        pc = await guard(ph, pc, undefined, "next", () => resolve(target));
        break;
      }
    }
  }
  return data;

  function resolve(target: number | string): number {
    if (typeof target === "string") {
      if (target === "init") throw new Error("a branch may not target init");
      const i = phases.findIndex((p) => p.name === target);
      if (i < 0) throw new Error(`no phase named "${target}"`);
      return i + 1;
    }
    if (target === 0) throw new Error("a branch may not target init (pc 0)");
    if (!Number.isInteger(target) || target < 1 || target > end) throw new Error(`program counter ${target} is outside 1..${end}`);
    return target;
  }
}
