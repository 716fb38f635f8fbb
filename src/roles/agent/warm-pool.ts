/**
 * The agent's warm ranks (`--warm-ranks N`): N processes with the runtime up and ebb/comm loaded
 * (roles/warm-rank.ts), owned by no job, so that a rank a step starts here (a grow's joining ranks
 * above all) need not wait for a runtime to start. A rank takes one when its argv is this ebb's
 * `ebb exec [--] FILE ARGS` and nothing in its start would differ from a cold one's (warmProgram,
 * startsWarm); the process table claims it (procs.ts). The pool refills a moment after each take,
 * so the refill does not compete with the grow it served. Protocol and safety: README.md ("Warm ranks").
 */
import type { Subprocess } from "bun";
import { join } from "node:path";
import { ebbCommand, isCompiled } from "../../util/self.ts";
import { logger } from "../../util/log.ts";

const log = logger("agent");

/** stdin (the claim), stdout, stderr, and fd 3 (a socketpair: the rank's PMI link once claimed). */
export type WarmProcess = Subprocess<"pipe", "pipe", "pipe">;

/** Most warm ranks an agent keeps (each is a runtime's memory, ~40 MB). */
export const MAX_WARM_RANKS = 64;
/** After the agent starts and after each take: the pool fills when the node is likely quiet again. */
const REFILL_DELAY_MS = 1_000;
/** Warm ranks that end before any claim, one after another, before the pool stops refilling. */
const MAX_FAILURES = 3;

/**
 * Variables that change how the runtime itself starts (its loader, allocator, JIT, its own
 * settings), which a warm rank read at its start without them: a rank that sets one starts cold.
 */
const RUNTIME_VARIABLE = /^(LD_|BUN_|MALLOC_)|^(GLIBC_TUNABLES|NODE_OPTIONS|TZ)$/;

/** The program of `argv` if it is `ebb exec [--] FILE ARGS` of this agent's ebb (named as one of `ebbNames`), else undefined. */
export function warmProgram(argv: readonly string[], ebbNames: readonly string[]): { file: string; args: string[] } | undefined {
  if (!ebbNames.includes(argv[0] ?? "") || argv[1] !== "exec") return undefined;
  const [file, ...args] = argv[2] === "--" ? argv.slice(3) : argv.slice(2);
  if (file === undefined || file === "" || file.startsWith("-")) return undefined;
  return { file, args };
}

/** Whether a rank with this environment starts as a warm rank would: none of the runtime's start-up variables. */
export function startsWarm(env: Record<string, string>): boolean {
  return !Object.keys(env).some((k) => RUNTIME_VARIABLE.test(k));
}

export class WarmPool {
  private readonly idle: WarmProcess[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private failures = 0;
  private stopped = false;

  constructor(
    readonly size: number,
    /** How ranks name this agent's ebb: `ebb` (first on every job's PATH), its path there, and the binary itself. */
    readonly ebbNames: readonly string[],
    private readonly agent: string,
    /** The cgroup warm ranks wait in (under the agent's, so the sentinel kills them with it), if any. */
    private readonly cgroup: () => string | undefined,
  ) {
    this.schedule();
  }

  /** An idle warm rank, now the caller's; undefined if none is left (the rank starts cold). */
  take(): WarmProcess | undefined {
    this.schedule();
    for (let p = this.idle.shift(); p; p = this.idle.shift()) {
      if (p.exitCode === null && p.signalCode === null) {
        this.failures = 0;
        return p;
      }
    }
    return undefined;
  }

  /** The agent stops: idle warm ranks are killed (claimed ones are their jobs'). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const p of this.idle.splice(0)) p.kill("SIGKILL");
  }

  private schedule(): void {
    if (this.stopped || this.timer || this.size === 0 || this.failures >= MAX_FAILURES) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.fill();
    }, REFILL_DELAY_MS);
    this.timer.unref?.();
  }

  private fill(): void {
    while (!this.stopped && this.idle.length < this.size && this.failures < MAX_FAILURES) {
      const proc = this.start();
      if (!proc) return;
      this.idle.push(proc);
      void proc.exited.then(async (code) => {
        const at = this.idle.indexOf(proc);
        if (at < 0 || this.stopped) return; // claimed: its job's now; or the agent stops
        this.idle.splice(at, 1);
        const why = (await new Response(proc.stderr).text().catch(() => "")).trim().slice(-500);
        this.failures++;
        log.warn(`a warm rank ended before any rank claimed it (exit ${code ?? proc.signalCode})${why ? `: ${why}` : ""}${this.failures >= MAX_FAILURES ? `; after ${MAX_FAILURES} such ends the pool stops refilling and ranks start cold` : ""}`);
        this.schedule();
      });
    }
  }

  /** A warm rank: an empty environment, `/`, a session of its own, in the pool's cgroup where there is one. */
  private start(): WarmProcess | undefined {
    const argv = [...ebbCommand(), "warm-rank", "--agent", this.agent];
    const options: Bun.SpawnOptions.OptionsObject<"pipe", "pipe", "pipe"> = { cwd: "/", env: {}, stdio: ["pipe", "pipe", "pipe", "pipe" as "socket-fd"], detached: true };
    try {
      const cgroup = this.cgroup();
      if (cgroup !== undefined)
        try {
          return Bun.spawn(argv, { ...options, cgroup });
        } catch {
          /* not there: without */
        }
      return Bun.spawn(argv, options);
    } catch (e) {
      this.failures = MAX_FAILURES;
      log.warn("cannot start warm ranks; ranks start cold", { error: e });
      return undefined;
    }
  }
}

/** The names under which a rank's argv[0] is this agent's ebb: `ebb` on the job's PATH (the agent's directory is first), its path there, the compiled binary. */
export function ebbNamesOf(binDir: string): string[] {
  return ["ebb", join(binDir, "ebb"), ...(isCompiled() ? [process.execPath] : [])];
}

