/**
 * The step root of an elastic command job, in its own process on the controller's host (`ebb
 * step-root`, started by the controller): as `ebb run` is, it is on none of the job's nodes, so
 * the job survives the loss of any of them, its first included. It writes the job's output file
 * (on the controller's host), follows the job on the launcher WebSocket with the job's token
 * (resize and fault orders, cancel), and reports the job's end there (`release`).
 */
import { ApiClient } from "../../api/client.ts";
import type { StepRootStart } from "../../proto/step-root.ts";
import { PeerPool } from "../../tbon/pool.ts";
import { logger } from "../../util/log.ts";
import { ControllerLink } from "./controller-link.ts";
import { isFinal } from "../../domain/job.ts";
import { commandLaunch, type CommandStart } from "./launch.ts";
import { fileSink } from "./output.ts";
import { outputMode } from "../job-umask.ts";

const log = logger("launcher");

/** How long the root keeps reporting the job's end while the controller does not confirm it (a restart may be under way). */
const REPORT_FOR_MS = 60_000;
const REPORT_EVERY_MS = 5_000;

/** Runs step 0 of the job to its end and reports it; returns its exit code. */
export async function runCommandRoot(s: StepRootStart & { job: CommandStart }): Promise<number> {
  const job = s.job;
  const ca = s.ca === undefined ? undefined : { pem: s.ca, path: "the controller's cluster CA" };
  const link = new ControllerLink(new ApiClient(s.controller, job.jobEnv.EBB_TOKEN ?? "", ca), job.id, (m) => log.warn(m, { job: job.id }));
  let exitCode = 1;
  let message: string | undefined;
  let lostNode: string | undefined;
  try {
    const sink = fileSink(job.output, { label: false, error: job.error, append: job.append, mode: outputMode(job.env) });
    const pool = new PeerPool(s.ca);
    const launch = commandLaunch(job, { link, fanout: s.fanout, connect: (addr) => pool.get(addr), openAhead: (addr) => pool.prepare(addr), sink });
    // Cancelled, timed out or failed by the controller: the ranks are being killed; stop waiting for them.
    const offState = link.onState((st) => {
      if (isFinal(st.state)) launch.cancel(`job ${job.id} ${st.state.toLowerCase()}${st.reason ? `: ${st.reason}` : ""}`, 143);
    });
    const r = await launch.run();
    offState();
    sink.flush();
    sink.close();
    pool.close();
    ({ exitCode, failure: message, lostNode } = r);
  } catch (e) {
    message = `its step root could not run it: ${(e as Error).message}`;
  }
  // Until the controller has it (the job is over for it), or a minute: it may be restarting.
  const deadline = Date.now() + REPORT_FOR_MS;
  while (!isFinal(link.latest?.state ?? "") && Date.now() < deadline) {
    link.release(exitCode, message, lostNode);
    await Promise.race([link.nextState(), Bun.sleep(REPORT_EVERY_MS)]);
  }
  link.close();
  return exitCode;
}
