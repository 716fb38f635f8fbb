/**
 * An EPOP program for the CFG's EPOP mode: two elastic phases with different communication.
 *   ring (elastic, --a iterations): a p2p ring (send right, receive left) and an allreduce, 2 ms of work
 *   sum  (elastic, --b iterations): a bcast and an allreduce, 2 ms of work
 *   done (rigid, once): rank 0 prints "epop-phases: done"
 * Each iteration issues several comm calls at several call sites; in EPOP mode none of them is a
 * CFG node, each phase is one loop.
 */
import { defineProgram, runEpop } from "../../../src/epop/index.ts";

interface Data {
  a: number;
  b: number;
  acc: number;
}

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

const num = (args: string[], name: string, dflt: number) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? dflt : Number(args[i + 1]);
};

await runEpop(
  defineProgram<Data>({
    name: "epop-phases",
    init: (args) => ({ a: num(args, "a", 30), b: num(args, "b", 20), acc: 0 }),
    phases: [
      {
        kind: "elastic",
        name: "ring",
        exec: async (d, { world }) => {
          spin(2);
          const right = (world.rank + 1) % world.size;
          const left = (world.rank + world.size - 1) % world.size;
          const [, got] = await Promise.all([world.send(right, world.rank, 3), world.recv<number>(left, 3)]);
          d.acc += await world.allreduce(got.data, "sum");
        },
        adapt: () => {},
        loop: (d, { iteration }) => iteration < d.a,
        bound: (d) => d.a,
      },
      {
        kind: "elastic",
        name: "sum",
        exec: async (d, { world }) => {
          spin(2);
          d.acc += await world.bcast(world.rank === 0 ? 1 : 0, 0);
          d.acc += await world.allreduce(1, "sum");
        },
        adapt: () => {},
        loop: (d, { iteration }) => iteration < d.b,
        bound: (d) => d.b,
      },
      { kind: "rigid", name: "done", exec: (d, { world }) => void (world.rank === 0 && console.log(`epop-phases: done acc=${d.acc}`)) },
    ],
  }),
);
