/**
 * How readily JavaScriptCore optimizes hot code, per role. Bun.unsafe.setJITPolicy scales its
 * tier-up thresholds; 1 is JSC's normal policy.
 *
 * Every command starts RELUCTANT (the compiled binary is built with the same scale, so that module
 * loading runs under it too). A client command lives for tens of milliseconds, and what its JIT
 * threads compile meanwhile mostly competes for cores with the ranks it launches. A node agent
 * starts reluctant: per job it runs a little glue code, and under the normal policy every agent
 * process spent about a fifth of its CPU optimizing that code (1,000 jobs over 4 agents); a node's
 * cores belong to its jobs. Its thread turns NORMAL after its first jobs (roles/agent/tier-up.ts),
 * once the same glue has run often enough to repay compiling it. Processes that run the same
 * paths all day in one VM (the controller, `ebb up`, the simulator) switch to NORMAL once
 * started: for them the optimized code pays off.
 */
import { z } from "zod";

export const RELUCTANT = 16;
export const NORMAL = 1;

/**
 * How every command starts: RELUCTANT, and without zod's generated parsers. Zod compiles a parser
 * per object schema (new Function) at its first parse; a client command never earns that back
 * (`ebb run -n 2 ./hello` is ~5 ms faster without). The daemons gain nothing from them either: in
 * a loop of its own, an agent parses a job.start + job.kill pair in ~25 µs with them and ~60 µs
 * without, but with them a cluster running 1,000 one-rank jobs used 3-10% more CPU in alternating
 * runs. Must run before any schema is built: zod reads the setting when a schema is made.
 */
export function startupPolicy(): void {
  jitPolicy(RELUCTANT);
  z.config({ jitless: true });
}

/**
 * Zod's generated parsers, for the object schemas built from now on. The controller turns them on
 * once started: the job submission's schema (built at its first parse: proto/requests.ts) has
 * some forty optional fields, and a null job's submission parsed in a median 27 µs without and 11
 * µs with (6 alternating runs of 50,000, load 16); agents' small messages parse alike either way.
 */
export function zodParsers(): void {
  z.config({ jitless: false });
}

export function jitPolicy(scale: number): void {
  // A tuning knob, not a requirement: a Bun without it runs at its normal policy.
  const unsafe = Bun.unsafe as { setJITPolicy?: (scale: number) => void };
  unsafe.setJITPolicy?.(scale);
}
