/**
 * The EPOP driver loop with plain data (pure: no ranks, no sockets): rigid, elastic and branch
 * sequencing, where adaptation windows fall, where a joining rank enters, and errors that name
 * the phase, the program counter, the iteration and the rank. The environment below is a script
 * of which probes are pending; the real one (runEpop over ebb/comm) is tested in test/elastic.
 */
import { describe, expect, test } from "bun:test";
import { defineProgram, drive, EpopError, structureOf, type Counters, type Env, type Progress, type WorldLike } from "../../src/epop/index.ts";

interface Data {
  log: string[];
  n: number;
  rounds: number;
}
type W = WorldLike;
type X = { tag: string };

/** An environment whose probes are pending at the listed call numbers (1-based). */
function scripted(opts: { rank?: number; pendingAt?: number[]; joinAt?: Counters; leaveAt?: number }) {
  const world = { rank: opts.rank ?? 0, size: 1 };
  let probes = 0;
  const windows: (Counters | null)[] = [];
  const progress: Progress[] = [];
  const env: Env<W, X> = {
    joining: opts.joinAt !== undefined,
    world: () => world,
    probe: async () => {
      probes++;
      return opts.pendingAt?.includes(probes) ?? false;
    },
    window: async (at, block) => {
      windows.push(at);
      const c = at ?? opts.joinAt!;
      await block(c, { tag: `w${windows.length}` });
      return windows.length === opts.leaveAt ? null : c;
    },
    progress: (p) => progress.push(p),
  };
  return { env, windows, progress, probes: () => probes };
}

const program = defineProgram<Data, W, X>({
  name: "seq",
  init: (args, ctx) => ({ log: [`init ${args.join(" ")} joining=${ctx.joining}`], n: 0, rounds: 0 }),
  phases: [
    { kind: "rigid", name: "setup", exec: (d) => void d.log.push("setup") },
    { kind: "rigid", name: "warm", exec: (d, c) => void d.log.push(`warm ${c.iteration}`), loop: (_, c) => c.iteration < 2 },
    {
      kind: "elastic",
      name: "work",
      exec: (d, c) => {
        d.n++;
        d.log.push(`work ${c.iteration}`);
      },
      adapt: (d, w) => void d.log.push(`adapt ${w.tag}`),
      loop: (_, c) => c.iteration < 3,
      bound: () => 3,
    },
    { kind: "branch", name: "again?", next: (d, pc) => (++d.rounds < 2 ? "work" : pc + 1) },
    { kind: "rigid", name: "finish", exec: (d) => void d.log.push(`finish n=${d.n}`) },
  ],
});

describe("sequencing", () => {
  test("init, rigid once, rigid loop (do-while), elastic loop, branch back, then on to the end", async () => {
    const s = scripted({});
    const d = (await drive(program, ["a", "b"], s.env))!;
    expect(d.log).toEqual(["init a b joining=false", "setup", "warm 0", "warm 1", "work 0", "work 1", "work 2", "work 0", "work 1", "work 2", "finish n=6"]);
    // One probe per elastic iteration, none elsewhere.
    expect(s.probes()).toBe(6);
    expect(s.windows).toEqual([]);
    expect(s.progress.filter((p) => p.phase === "work" && p.iteration === 3).map((p) => p.bound)).toEqual([3, 3]);
    expect(structureOf(program)).toEqual({
      name: "seq",
      phases: [
        { pc: 0, name: "init", kind: "init" },
        { pc: 1, name: "setup", kind: "rigid" },
        { pc: 2, name: "warm", kind: "rigid" },
        { pc: 3, name: "work", kind: "elastic" },
        { pc: 4, name: "again?", kind: "branch" },
        { pc: 5, name: "finish", kind: "rigid" },
      ],
    });
  });

  test("a pending probe runs the phase's adapt block before that iteration's exec, with the counters", async () => {
    const s = scripted({ pendingAt: [2, 5] });
    const d = (await drive(program, [], s.env))!;
    expect(d.log.slice(4)).toEqual(["work 0", "adapt w1", "work 1", "work 2", "work 0", "adapt w2", "work 1", "work 2", "finish n=6"]);
    expect(s.windows).toEqual([{ pc: 3, iteration: 1 }, { pc: 3, iteration: 1 }]);
  });

  test("a joining rank runs init (joining), the adapt block of the phase it is told, then continues from that iteration", async () => {
    const s = scripted({ joinAt: { pc: 3, iteration: 2 } });
    const d = (await drive(program, [], s.env))!;
    expect(d.log).toEqual(["init  joining=true", "adapt w1", "work 2", "work 0", "work 1", "work 2", "finish n=4"]);
    expect(s.windows).toEqual([null]);
    // It probes before its first iteration, like a rank that was there.
    expect(s.probes()).toBe(4);
  });

  test("a rank that leaves in a window gets null and runs nothing after it", async () => {
    const s = scripted({ pendingAt: [2], leaveAt: 1 });
    expect(await drive(program, [], s.env)).toBeNull();
  });
});

describe("errors name the phase, the program counter, the iteration and the rank", () => {
  const failing = (where: "exec" | "loop" | "adapt" | "init" | "branch") =>
    defineProgram<Data, W, X>({
      name: "failing",
      init: () => {
        if (where === "init") throw new Error("no memory");
        return { log: [], n: 0, rounds: 0 };
      },
      phases: [
        { kind: "rigid", name: "prep", exec: () => {} },
        {
          kind: "elastic",
          name: "solve",
          exec: (_, c) => {
            if (where === "exec" && c.iteration === 2) throw new Error("diverged");
          },
          adapt: () => {
            if (where === "adapt") throw new RangeError("bad layout");
          },
          loop: (_, c) => {
            if (where === "loop") throw new Error("NaN residual");
            return c.iteration < 4;
          },
        },
        { kind: "branch", name: "route", next: () => (where === "branch" ? "init" : 4) },
      ],
    });

  test.each([
    ["exec", 'phase "solve" (pc 2, exec, iteration 2) failed on rank 3: diverged'],
    ["loop", 'phase "solve" (pc 2, loop, iteration 1) failed on rank 3: NaN residual'],
    ["adapt", 'phase "solve" (pc 2, adapt, iteration 0) failed on rank 3: bad layout'],
    ["init", "init failed on rank 3: no memory"],
    ["branch", 'phase "route" (pc 3, next) failed on rank 3: a branch may not target init'],
  ] as const)("in %s", async (where, message) => {
    const s = scripted({ rank: 3, pendingAt: [1] });
    const err = await drive(failing(where), [], s.env).then(
      () => undefined,
      (e) => e,
    );
    expect(err).toBeInstanceOf(EpopError);
    expect(err.message).toBe(message);
  });

  test("branch targets outside the program and unknown names; a joiner told a non-elastic pc", async () => {
    const to = (target: number | string) =>
      defineProgram<Data, W, X>({ name: "b", init: () => ({ log: [], n: 0, rounds: 0 }), phases: [{ kind: "branch", name: "jump", next: () => target }] });
    await expect(drive(to(0), [], scripted({}).env)).rejects.toThrow("may not target init (pc 0)");
    await expect(drive(to(3), [], scripted({}).env)).rejects.toThrow("program counter 3 is outside 1..2");
    await expect(drive(to("nowhere"), [], scripted({}).env)).rejects.toThrow('no phase named "nowhere"');
    expect(await drive(to(2), [], scripted({}).env)).toEqual({ log: [], n: 0, rounds: 0 });
    await expect(drive(program, [], scripted({ joinAt: { pc: 1, iteration: 0 } }).env)).rejects.toThrow("not an elastic phase");
  });

  test("programs the types would refuse are refused at start too, naming the field", async () => {
    const bad = (phases: unknown[]) => drive({ name: "x", init: () => ({}), phases } as never, [], scripted({}).env);
    await expect(bad([])).rejects.toThrow("program.phases: must be a non-empty array");
    await expect(bad([{ kind: "elastic", name: "e", exec: () => {}, adapt: () => {} }])).rejects.toThrow('program.phases[0].loop: phase "e" (elastic) needs a function');
    await expect(bad([{ kind: "rigid", name: "a", exec: () => {} }, { kind: "rigid", name: "a", exec: () => {} }])).rejects.toThrow('program.phases[1].name: "a" is used twice');
    await expect(bad([{ kind: "rigid", name: "init", exec: () => {} }])).rejects.toThrow("reserved");
    await expect(bad([{ kind: "loop", name: "l" }])).rejects.toThrow("program.phases[0].kind");
  });
});
