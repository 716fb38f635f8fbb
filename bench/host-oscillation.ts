/**
 * Issue 34's goal "0 moves in 10 minutes of a load that oscillates within the hysteresis band": the
 * agent's judge (src/model/host-judge.ts, pure) over 10 minutes of a synthetic cpu.other sampled at
 * the rules' interval, with the shared-workstation defaults (sampled every 1 s, smoothed 10 s,
 * hysteresis 0.2, held 10 s; overloaded from 0.6, left below 0.48). A node's jobs move only when it
 * turns overloaded or owner, so no state change means no move. Counted after a first minute in which
 * the node settles into the state the load's mean gives it. Baseline, same signal: the same
 * thresholds without smoothing, hysteresis or dwell (what the state would do on the raw signal).
 * The end-to-end check of the same (a real load on and off faster than the dwell, on real agents) is
 * test/e2e/host-moves.test.ts.
 */
import { firstJudgement, judge } from "../src/model/host-judge.ts";
import { resolveHostRules, WORKSTATION, type HostRules } from "../src/model/host-rules.ts";
import type { Bench, Figure } from "./lib.ts";

const rulesOf = (settings: object): HostRules => {
  const r = resolveHostRules({ hostStates: settings }, "bench");
  if (!r || "error" in r) throw new Error(`bench rules: ${JSON.stringify(r)}`);
  return r;
};

/** A small seeded generator (mulberry32): the same signal every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** State changes, and the states taken, judging `signal(t)` every interval for `seconds` after `warmup` s. */
function run(rules: HostRules, signal: (t: number) => number, warmup: number, seconds: number) {
  let j = firstJudgement(0);
  let changes = 0;
  const states = new Set<string>();
  for (let t = rules.interval; t <= warmup + seconds; t += rules.interval) {
    const before = j.host.state;
    j = judge(rules, j, t, { "cpu.other": signal(t), "psi.mem": 0, users: 0 });
    if (t > warmup) {
      states.add(j.host.state);
      if (j.host.state !== before) changes++;
    }
  }
  return { changes, states: [...states].join(",") };
}

export default {
  name: "host-oscillation",
  description: "state changes of the agent's host judge over 10 minutes of a load oscillating across its thresholds (goal: 0 moves)",
  async run() {
    const defaults = rulesOf({});
    const raw = rulesOf({ smoothing: 0, hysteresis: 0, dwell: 0 });
    const over = WORKSTATION.rules["cpu.other"]!.overloaded!;
    const noise = random(34);
    const signals: { name: string; at: (t: number) => number }[] = [
      // Crosses 0.6 and 0.48 every 2 s; its mean, 0.55, is inside the band.
      { name: "a 4 s square wave 0.35-0.75 with ±0.05 noise (mean in the band)", at: (t) => (Math.floor(t / 2) % 2 === 0 ? 0.75 : 0.35) + (noise() - 0.5) * 0.1 },
      // Slow enough to pass the dwell above 0.6: the node turns overloaded once, then its dips stay above 0.48.
      { name: "a 60 s sine 0.45-0.75", at: (t) => 0.6 + 0.15 * Math.sin((2 * Math.PI * t) / 60) },
      // A load on for 3 s, off for 5 s: on, far over the threshold; shorter than the dwell.
      { name: "a load on 3 s (0.9) / off 5 s (0)", at: (t) => (t % 8 < 3 ? 0.9 : 0) },
    ];
    const figures: Figure[] = [];
    for (const s of signals) {
      const crossings = (() => {
        let n = 0;
        for (let t = 61; t <= 660; t++) if (s.at(t) >= over !== s.at(t - 1) >= over) n++;
        return n;
      })();
      const judged = run(defaults, s.at, 60, 600);
      const bare = run(raw, s.at, 60, 600);
      console.error(`  ${s.name}: ${judged.changes} state changes (held ${judged.states}); raw signal crossed ${over} ${crossings} times; without smoothing, hysteresis and dwell ${bare.changes} changes (${bare.states})`);
      figures.push({ name: `state changes in 10 min: ${s.name}`, value: judged.changes, unit: "changes", baseline: { name: "no smoothing, hysteresis, dwell", value: bare.changes }, better: "lower", goal: "0", met: judged.changes === 0 });
    }
    return figures;
  },
} satisfies Bench;
