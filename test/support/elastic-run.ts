/** An elastic `ebb run` in the background, for tests that watch or resize it. */
import { join } from "node:path";
import { ROOT, waitFor, type TestCluster } from "./cluster.ts";

/** test/elastic/programs/counter.ts: an elastic loop that prints each world it joins. */
export const COUNTER = join(ROOT, "test/elastic/programs/counter.ts");

/**
 * Start `ebb run ARGS`; resolves once its output matches `ready`, with the job's id. Its standard
 * error is read as it comes (`errors()`), so that a test can say what the launcher and the program
 * said so far when a resize fails, without waiting for the run's end.
 */
export async function elasticRun(c: TestCluster, args: string[], ready: RegExp, timeoutMs = 60_000) {
  const run = c.ebbSpawn(["run", ...args]);
  const reader = run.stdout.getReader();
  let out = "";
  let err = "";
  const errRead = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of run.stderr) err += decoder.decode(chunk, { stream: true });
  })();
  // Said once: the next attempt would find stderr read already.
  let early: Error | undefined;
  await waitFor(`the program to print ${ready}`, async () => {
    if (early) throw early;
    const { value, done } = await reader.read();
    if (done) throw (early = new Error(`ebb run ended early: ${out} ${(await errRead, err)}`));
    out += new TextDecoder().decode(value);
    return ready.test(out);
  }, timeoutMs);
  const jobs = (await c.api("GET", "/v1/jobs?state=RUNNING,ADAPTING")).json.jobs;
  const id = jobs[jobs.length - 1].id as number;
  const finished = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    await errRead;
    return { out, err, code: await run.exited };
  })();
  return { id, run, output: () => out, errors: () => err, finished };
}
