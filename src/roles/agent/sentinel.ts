/**
 * The sentinel: a small shell process that waits for EOF on a pipe only the agent's process holds.
 * When that process dies (SIGKILL included) the pipe closes and the sentinel kills, for each agent
 * it serves, the agent's cgroup and every process group of the agent's record whose leader is still
 * the one recorded, then removes the agents' cgroups.
 *
 * Each agent hands it its duty (`add`: record, cgroup directories) as lines on that pipe. An agent
 * that runs alone has a sentinel of its own; the agents of `ebb up`, which share one process and
 * die together, share one (`ebb up --nodes 1024` kept 1,024 sentinels, each holding a pipe and a
 * process descriptor in the process: 2,048 of its descriptors, copied into and closed in every rank
 * it spawns). A clean stop of the last agent it serves ends the pipe: it does its work at once.
 *
 * It ignores HUP, INT and TERM: what signals a whole tree or step at once (Slurm ending the
 * allocation of `ebb up --slurm`, a terminal hanging up) reaches the agent and the sentinel
 * together, and a sentinel killed then left the agent's cgroups behind. It reads each leader's
 * start time with shell builtins (no process per record line): the record holds up to ~256 groups
 * that ended, and a `sed | cut` per line cost 3 forks each — about 6 CPU seconds and 37 s per
 * agent at load 28, after every stop.
 *
 * It tries to remove the cgroups for 30 s (every 0.1 s for 2 s, then every second): a process it
 * killed may take longer than 2 s to leave (a warm rank's runtime under load; one blocked in the
 * kernel), and a sentinel that gave up after 2 s left the agent's directories in every hierarchy
 * (reproduced with a job process held in the v1 freezer for 5 s). What it still leaves, the
 * agent's next start sweeps (cgroup-sweep.ts).
 */
import type { Subprocess } from "bun";
import { logger } from "../../util/log.ts";
import { SYSTEM_PATH } from "../system-path.ts";

const log = logger("agent");

// Duties are 4 lines each: v2 base, v1 base, v1 base (empty where there is none), and the record
// last, never empty: $(cat) drops trailing newlines, and no duty loses a line to it.
const SCRIPT = `
trap '' HUP INT TERM
duties=$(cat)
clean() {
  record=$1 base=$2
  if [ -n "$base" ] && [ -d "$base" ]; then
    echo 1 >"$base/cgroup.kill" 2>/dev/null || for f in "$base"/*/cgroup.procs; do xargs -r kill -9 <"$f" 2>/dev/null; done
  fi
  [ -f "$record" ] || return 0
  set -f
  while read -r pgid job start; do
    [ -r "/proc/$pgid/stat" ] || continue
    read -r st <"/proc/$pgid/stat" 2>/dev/null || continue
    set -- \${st##*) }
    [ $# -ge 20 ] || continue
    shift 19
    [ "$1" = "$start" ] && kill -KILL "-$pgid" 2>/dev/null
  done <"$record"
  set +f
}
while IFS= read -r base && IFS= read -r v1a && IFS= read -r v1b && IFS= read -r record; do
  clean "$record" "$base"
done <<EOF
$duties
EOF
i=0
while [ $i -lt 48 ]; do
  left=
  while IFS= read -r base && IFS= read -r v1a && IFS= read -r v1b && IFS= read -r record; do
    for b in "$base" "$v1a" "$v1b"; do
      [ -n "$b" ] || continue
      for d in "$b"/*/; do rmdir "$d" 2>/dev/null; done
      rmdir "$b" 2>/dev/null
      [ -d "$b" ] && left=1
    done
  done <<EOF
$duties
EOF
  [ -z "$left" ] && break
  i=$((i + 1))
  if [ $i -le 20 ]; then sleep 0.1; else sleep 1; fi
done
`;

/** What one agent leaves the sentinel: its process-group record, its v2 cgroup and its v1 cgroups. */
export interface SentinelDuty {
  record: string;
  base: string | undefined;
  v1: readonly (string | undefined)[];
}

export class Sentinel {
  private readonly proc: Subprocess<"pipe", "ignore", "ignore"> | undefined;
  private duties = 0;
  private stopping = false;

  /** `guarding`: what it guards (an agent's record, a state directory), shown in its command line for `ps` and the tests that wait for it. */
  constructor(guarding: string) {
    try {
      // Its own PATH: the agent's may lack the tools it runs (xargs, rmdir, sleep), and a sentinel
      // that cannot run them guards nothing.
      this.proc = Bun.spawn(["/bin/sh", "-c", SCRIPT, "ebb-sentinel", guarding], { stdin: "pipe", stdout: "ignore", stderr: "ignore", detached: true, env: { PATH: SYSTEM_PATH } });
      this.proc.unref();
      void this.proc.exited.then((code) => {
        if (!this.stopping) log.warn(`the sentinel ended (exit ${code}) while its agents run: their jobs will not be killed if the agent process dies`);
      });
    } catch (e) {
      log.warn("could not start the sentinel that kills jobs if the agent dies", { error: e });
    }
  }

  /** The sentinel's pid; undefined if it could not start. */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** When it has done its work and ended (its exit code); undefined without one. */
  get ended(): Promise<number> | undefined {
    return this.proc?.exited;
  }

  /** One more agent to clean up after; false if it cannot (no sentinel, it has ended, or a path it cannot carry). */
  add(duty: SentinelDuty): boolean {
    const lines = [duty.base ?? "", duty.v1[0] ?? "", duty.v1[1] ?? "", duty.record];
    if (!this.proc || this.stopping || duty.record === "" || lines.some((l) => l.includes("\n"))) {
      log.warn(`the sentinel cannot guard ${duty.record}: its jobs will not be killed if the agent dies`);
      return false;
    }
    try {
      this.proc.stdin.write(lines.map((l) => `${l}\n`).join(""));
      void this.proc.stdin.flush();
    } catch (e) {
      log.warn("could not hand the sentinel its duty: the agent's jobs will not be killed if it dies", { error: e });
      return false;
    }
    this.duties++;
    return true;
  }

  /** An agent it serves stopped cleanly (it has killed everything already); after the last one, it does its work now. */
  release(): void {
    if (--this.duties > 0 || this.stopping) return;
    this.stopping = true;
    try {
      void this.proc?.stdin.end();
    } catch {
      /* gone */
    }
  }
}
