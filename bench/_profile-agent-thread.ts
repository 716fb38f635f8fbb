/**
 * `ebb` with its agents' thread under the sampling profiler (_profiled-agent-thread.ts): run as ebb's
 * main script (`bun bench/_profile-agent-thread.ts agent ...`), it has every Worker made from
 * src/cli/agent-thread.ts made from the profiled one instead. Not a benchmark.
 */
const Base = globalThis.Worker;
globalThis.Worker = class extends Base {
  constructor(url: string | URL, options?: WorkerOptions) {
    super(String(url).endsWith("/cli/agent-thread.ts") ? new URL("./_profiled-agent-thread.ts", import.meta.url).href : url, options);
  }
} as typeof Worker;
await import("../src/main.ts");
