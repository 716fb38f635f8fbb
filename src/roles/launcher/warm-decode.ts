/**
 * An elastic launcher's first resize order is the first `realloc` it parses: building that kind's
 * schema and running zod over it cold cost ~3.8 ms of CPU (0.25 ms warm), and the reductions the
 * agents send up in a resize (adapt.counted, checked, arrived, committed) ~0.8 ms more, all on the
 * resize's critical path. A launcher that takes resizes parses one made-up message of each kind
 * once, a while after its start, so that the real ones find the schemas built and their code compiled.
 * The messages are parsed and dropped: nothing acts on them.
 */
import { decode } from "../../proto/channel.ts";
import { ControllerToLauncher } from "../../proto/launcher.ts";
import { StepUp } from "../../proto/step.ts";

/** After the world's ranks have had their start: the parse then competes with nothing. */
const DELAY_MS = 1_000;

const sha = "0".repeat(64);

const toLauncher = [
  { t: "links", jobId: 1, nodes: [{ name: "b", addr: "127.0.0.1:2" }] },
  { t: "realloc", jobId: 1, adaptId: 1, nodes: [{ name: "a", addr: "127.0.0.1:1" }, { name: "b", addr: "127.0.0.1:2" }], added: [{ name: "b", addr: "127.0.0.1:2" }], removed: [], remap: { staying: 1, leaving: 0, joining: 1, tasks: [1, 1] }, deadline: 1, join: { stepId: 1, tasks: [1], cred: { jobId: 1, stepId: 1, nodes: ["b"], expires: 1, sig: sha, argv: sha, env: sha, jobEnv: sha, cwd: "/" } } },
  { t: "job.state", jobId: 1, state: "ADAPTING", nodes: ["a", "b"] },
];

const up = [
  { t: "adapt.counted", step: "1.0", adaptId: 1, round: 1, max: 1 },
  { t: "adapt.checked", step: "1.0", adaptId: 1, round: 1, racer: false },
  { t: "adapt.arrived", step: "1.0", adaptId: 1, round: 1, count: 1 },
  { t: "adapt.committed", step: "1.0", adaptId: 1, count: 1 },
];

/** Parses each made-up message; false if one does not parse (the schemas changed under this file). */
export function warmResizeDecoding(): boolean {
  let ok = true;
  for (const m of toLauncher) ok = decode(ControllerToLauncher, JSON.stringify(m)).ok && ok;
  for (const m of up) ok = decode(StepUp, JSON.stringify(m)).ok && ok;
  return ok;
}

/** Once, DELAY_MS from now, off the process's way out. */
export function warmResizeDecodingSoon(): void {
  setTimeout(warmResizeDecoding, DELAY_MS).unref?.();
}
