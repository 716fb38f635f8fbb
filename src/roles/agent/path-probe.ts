/**
 * Whether the paths of a job answer, asked off the agent's thread. A file system that hangs (an
 * NFS server gone, a FUSE daemon that never answers) holds whatever touches it in the kernel, and
 * the agent's one thread serves every job on the node: an open(2) of a job's output file there
 * stopped its heartbeats, the node went DOWN and every job on it NODE_FAIL. So before the agent
 * touches a job's paths (its directory, its output and error files, its program on PATH), a child
 * process, as the job's user, looks each one up (`test -e`, and a program's PATH search as
 * execvp's, direct-drop.ts). One that has not answered within PATH_ANSWER_SECONDS is killed (a
 * FUSE or NFS wait ends on SIGKILL) and the job or step fails naming the path; the node serves
 * its other jobs meanwhile.
 *
 * An answer is the user's word (she may answer for her own look-up process), and a path may hang
 * just after it answered: output and error files are therefore opened by processes of hers, never
 * by the agent (output-after-drop.ts, user-file-sink.ts); the look-up only fails their job sooner,
 * naming the path. The directory and the program are still touched by the agent after it (README.md).
 */
import { join, resolve } from "node:path";
import { dropsBySpawn, runAsArgv, type Identity } from "../identity.ts";
import { SYSTEM_PATH } from "../system-path.ts";
import { PATH_DIRS_SEARCHED } from "../direct-drop.ts";

/** How long a job's paths have to answer, all together. */
export const PATH_ANSWER_SECONDS = 10;

/** A path to look up, and what it is to the job (for the message). */
export interface NamedPath {
  what: string;
  path: string;
  /** One of a program's places on PATH (its first, or a later one): looked up until the first executable file, as execvp. */
  onPath?: "first" | "later";
}

/**
 * The look-up of `$p`, then a line out: `?path` is a program's place on PATH, passed over once one
 * was found (`found`), `!path` its first. An answer (there or not, allowed or not) is all that is asked.
 */
const LOOK_ONE = `case $p in '!'*) found=; p="?\${p#?}" ;; esac; case $p in '?'*) [ -n "$found" ] || { [ -f "\${p#?}" ] && [ -x "\${p#?}" ] && found=1; } ;; *) [ -e "$p" ] ;; esac; echo`;
/** The paths as arguments, once. */
const LOOK = `for p do ${LOOK_ONE}; done`;
/** The paths on stdin, a line each, kept between jobs (an empty line ends a look-up). */
const LOOK_ON = `while IFS= read -r p; do [ -z "$p" ] || { ${LOOK_ONE}; }; done`;

/** The places of `name` in `PATH` (from `cwd`), as execvp tries them; itself when it has a slash. */
export function programPaths(name: string, cwd: string, PATH: string | undefined): NamedPath[] {
  if (name === "" || name.startsWith("/dev/fd/")) return [];
  if (name.includes("/")) return [{ what: "program", path: resolve(cwd, name) }];
  const dirs = (PATH ?? "/usr/local/bin:/usr/bin:/bin").split(":", PATH_DIRS_SEARCHED);
  return dirs.map((dir, i) => ({ what: `program ${name}: PATH directory`, path: resolve(cwd, join(dir || ".", name)), onPath: i === 0 ? "first" : "later" }));
}

/** Whose look-ups share processes (and vouch for each other): a user with her groups; "" the agent's own. */
const keyOf = (id: Identity | undefined): string => (id ? `${id.uid}:${id.gid}:${id.groups.join(",")}` : "");

/** How long a user's look-up process waits, idle, for the next job's paths. */
const KEPT_IDLE_MS = 30_000;

/** `sh -c script` as `id` (or as the agent), with the system PATH, in `/`. */
function spawnAs<In extends "pipe" | "ignore">(id: Identity | undefined, script: string, args: string[], stdin: In) {
  const argv = ["/bin/sh", "-c", script, "sh", ...args];
  const bySpawn = id !== undefined && dropsBySpawn(id);
  return Bun.spawn(id && !bySpawn ? runAsArgv(id, "/", argv) : argv, {
    cwd: "/",
    env: { PATH: SYSTEM_PATH },
    stdio: [stdin, "pipe", "ignore"],
    ...(bySpawn ? { uid: id.uid, gid: id.gid } : {}),
  });
}

/** How many of `need` lines `proc` wrote before it ended, or was killed after `seconds` (late). */
async function answers(proc: { stdout: ReadableStream<Uint8Array>; kill(signal: number): void }, seconds: number, need: number): Promise<{ got: number; late: boolean }> {
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    proc.kill(9);
  }, seconds * 1000);
  let got = 0;
  try {
    for await (const chunk of proc.stdout) {
      for (const byte of chunk) if (byte === 10) got++;
      if (got >= need) break;
    }
  } finally {
    clearTimeout(timer);
    proc.kill(9);
  }
  return { got, late };
}

/**
 * A user's look-up process, kept while it answers (a process spawned for each look-up nearly
 * doubled a null job's agent CPU: a job's start and its step's each spawned one): paths on its
 * stdin, a line out for each. Killed when a look-up is late; leaves by itself after KEPT_IDLE_MS idle.
 */
class Kept {
  private readonly proc;
  private readonly stdout: ReadableStreamDefaultReader<Uint8Array>;
  busy = false;
  private idle: ReturnType<typeof setTimeout> | undefined;

  constructor(id: Identity | undefined, private readonly gone: (k: Kept) => void) {
    this.proc = spawnAs(id, LOOK_ON, [], "pipe");
    this.proc.unref();
    this.stdout = this.proc.stdout.getReader();
    void this.proc.exited.then(() => this.end());
  }

  /** How many of `lines` were answered, and whether it was late; one that is not all answered ends it. */
  async ask(lines: string[], seconds: number): Promise<{ got: number; late: boolean }> {
    this.busy = true;
    clearTimeout(this.idle);
    let late = false;
    let got = 0;
    const timer = setTimeout(() => {
      late = true;
      this.end();
    }, seconds * 1000);
    try {
      this.proc.stdin.write(`${lines.join("\n")}\n\n`);
      this.proc.stdin.flush();
      while (got < lines.length) {
        const { value, done } = await this.stdout.read();
        if (done) break;
        for (const byte of value) if (byte === 10) got++;
      }
    } finally {
      clearTimeout(timer);
      this.busy = false;
      if (got < lines.length) this.end();
      else this.idle = setTimeout(() => this.end(), KEPT_IDLE_MS).unref();
    }
    return { got, late };
  }

  end(): void {
    clearTimeout(this.idle);
    this.proc.kill(9);
    this.gone(this);
  }
}

/** The most look-up processes kept for one user, for as many of her jobs starting at once on the node (null jobs' agent CPU against main: 4 of them x1.17-1.20, 16 x1.05-1.11). */
const KEPT_PER_USER = 16;

/**
 * The look-ups of an agent's jobs' paths: each user's in processes of hers kept while idle (Kept,
 * KEPT_PER_USER of them), else in one spawned for the look-up (all busy, or a path holds a
 * newline: then in argv).
 */
export class PathProbes {
  private readonly kept = new Map<string, Kept[]>();
  /**
   * What a command job's start looked up with its own paths for its step 0 here (its directory,
   * program and output), by job: that step's look-up a moment later is answered from it, once, if
   * it asks no other path (one look-up per null job, not two). Dropped when used or the job ends here.
   */
  private readonly vouched = new Map<number, { key: string; lines: Set<string> }>();

  /**
   * Undefined when every path answered within `seconds` (or the look-up could not be spawned: the
   * touch after it then fails as it would have); else why not, `output file X did not answer within
   * 10 s`, or that the look-up ended before it answered (killed by the user it runs as).
   */
  async unanswered(id: Identity | undefined, paths: readonly NamedPath[], seconds = PATH_ANSWER_SECONDS, job?: { vouch?: number; vouched?: number }): Promise<string | undefined> {
    if (paths.length === 0) return undefined;
    const lines = paths.map((p) => (p.onPath === "first" ? `!${p.path}` : p.onPath ? `?${p.path}` : p.path));
    const key = keyOf(id);
    const v = job?.vouched === undefined ? undefined : this.vouched.get(job.vouched);
    if (v) {
      this.vouched.delete(job!.vouched!);
      if (v.key === key && lines.every((l) => v.lines.has(l))) return undefined;
    }
    let r: { got: number; late: boolean };
    try {
      r = (await this.askKept(id, lines, seconds)) ?? (await answers(spawnAs(id, LOOK, lines, "ignore"), seconds, lines.length));
    } catch {
      return undefined;
    }
    if (r.got >= paths.length) {
      if (job?.vouch !== undefined) this.vouched.set(job.vouch, { key, lines: new Set(lines) });
      return undefined;
    }
    const hung = paths[r.got]!;
    if (r.late) return `${hung.what} ${hung.path} did not answer within ${seconds} s`;
    // Not late but not answered: the user's look-up ended (she may kill her own processes). Going on
    // would let the agent's thread touch a path nobody vouched for.
    return `${hung.what} ${hung.path} could not be looked up: the look-up process, as the job's user, ended before it answered`;
  }

  /** The answer of an idle kept process of the user's; undefined when all are busy, a path cannot go on a line, or it ended before it answered (not late). */
  private async askKept(id: Identity | undefined, lines: string[], seconds: number): Promise<{ got: number; late: boolean } | undefined> {
    if (lines.some((l) => l.includes("\n"))) return undefined;
    const key = keyOf(id);
    let all = this.kept.get(key);
    if (!all) this.kept.set(key, (all = []));
    let kept = all.find((k) => !k.busy);
    if (!kept && all.length >= KEPT_PER_USER) return undefined;
    if (!kept) {
      const own = all;
      all.push(
        (kept = new Kept(id, (k) => {
          const at = own.indexOf(k);
          if (at >= 0) own.splice(at, 1);
          if (own.length === 0 && this.kept.get(key) === own) this.kept.delete(key);
        })),
      );
    }
    const r = await kept.ask(lines, seconds).catch(() => undefined);
    return r && (r.late || r.got >= lines.length) ? r : undefined;
  }

  /** The job has ended here: what its start vouched for goes. */
  forget(jobId: number): void {
    this.vouched.delete(jobId);
  }

  /** The agent stops: the kept processes end. */
  close(): void {
    for (const k of [...this.kept.values()].flat()) k.end();
  }
}
