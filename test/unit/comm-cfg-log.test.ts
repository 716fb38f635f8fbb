/**
 * ebb/comm records each call's CFG step in a log and feeds the detector later (src/comm/cfg.ts):
 * the detector must end up exactly as one stepped in the call, times and MPI time included,
 * whenever and in whatever pieces the log is fed (idle polling turns, a full log, a read).
 */
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { Detector } from "../../src/cfg/detector.ts";
import { OpType } from "../../src/cfg/types.ts";
import { CallOp, cfgDetector, cfgIdle, cfgStep, cfgTime, siteOf, startCfg } from "../../src/comm/cfg.ts";
import { mulberry32 } from "../../src/sim/random.ts";

test("the logged steps leave the detector as direct steps do (10,000 calls, fed in random pieces)", async () => {
  const file = `/tmp/ebb-comm-cfg-log-${process.pid}.cfg`;
  expect(startCfg({ EBB_CFG_FILE: file, EBB_SAMPLE_INTERVAL: "0.00001" })).toBe(true);
  // The calls' clock starts after startCfg: taken before it, a slow start (a loaded machine) put its
  // first sample time past every call's, and no sample was taken.
  const start = Bun.nanoseconds();
  const direct = new Detector({ interval: 0.00001 * 1e9, start: cfgDetector()!["nextSampleAt"] - 0.00001 * 1e9 });
  const rng = mulberry32(7);
  const rnd = () => rng.next();
  // A program of nested loops with a branch: sends and receives to 3 peers, an allreduce, times rising.
  let t = start;
  const ops = [CallOp.send, CallOp.recv, CallOp.allreduce];
  for (let i = 0; i < 10_000; i++) {
    const op = ops[i % 7 < 3 ? 0 : i % 7 < 6 ? 1 : 2]!;
    const peer = (i % 3) + (rnd() < 0.02 ? 1 : 0);
    t += 100 + Math.floor(rnd() * 1000);
    cfgStep(op, 0, peer, 0, t);
    direct.step(siteOf(op, 0, peer, 0), op < CallOp.barrier ? OpType.P2p : OpType.Collective, t, t);
    const dt = Math.floor(rnd() * 500);
    cfgTime(dt);
    direct.addTime(dt);
    if (rnd() < 0.3) for (let k = Math.floor(rnd() * 4); k > 0; k--) cfgIdle();
  }
  const logged = cfgDetector()!;
  expect(logged.table()).toEqual(direct.table());
  const samples = direct.drainSamples();
  expect(samples.length).toBeGreaterThan(10);
  expect(logged.drainSamples()).toEqual(samples);
  expect(logged.drainEvents()).toEqual(direct.drainEvents());
  expect(logged.table().length).toBeGreaterThan(3);
  await Bun.sleep(5); // the table's write, scheduled when the detector had output
  rmSync(file, { force: true });
});
