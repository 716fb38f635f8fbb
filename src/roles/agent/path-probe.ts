/**
 * Whether the paths of a job answer, asked off the agent's thread. A file system that hangs (an
 * NFS server gone, a FUSE daemon that never answers) holds whatever touches it in the kernel, and
 * the agent's one thread serves every job on the node: an open(2) of a job's output file there
 * stopped its heartbeats, the node went DOWN and every job on it NODE_FAIL. So before a job or
 * step starts, a child process, as the job's user, looks each of its paths up (its directory, its
 * output and error files, its program on PATH as execvp searches it): whether each is there, and
 * whether the program links MPI (the CFG library's question, cfg-lib.ts). One that has not answered
 * within PATH_ANSWER_SECONDS is killed (a FUSE or NFS wait ends on SIGKILL) and the job or step
 * fails naming the path; the node serves its other jobs meanwhile.
 *
 * An answer is the user's word (she may answer for her own look-up process), and a path may hang
 * just after it answered: so the agent never touches these paths itself, before or after (its
 * thread never checks, enters, reads or executes them: her job's own processes do, after the drop,
 * identity.ts, output-after-drop.ts, user-file-sink.ts). A false answer only fails or slows her
 * own job, or gives her ranks the CFG library or not; the look-up makes a job fail sooner, naming
 * the path.
 */
import { join, resolve } from "node:path";
import { dropsBySpawn, runAsArgv, type Identity } from "../identity.ts";
import { SYSTEM_PATH } from "../system-path.ts";

/** How long a job's paths have to answer, all together. */
export const PATH_ANSWER_SECONDS = 10;

/**
 * The most directories of a job's PATH looked up for a program. A 128 KiB PATH (the most a process
 * starts with) holds 65,536. A program further down is still found by the rank's shell, which
 * searches all of PATH after the drop, as the user; it is not looked up first, and not asked about
 * MPI (it runs unmonitored).
 */
export const PATH_DIRS_SEARCHED = 1024;

/** A path to look up, and what it is to the job (for the message). */
export interface NamedPath {
  what: string;
  path: string;
  /** One of a program's places on PATH (its first, or a later one): looked up until the first executable file, as execvp. */
  onPath?: "first" | "later";
}

/** What a look-up found: why a path could not be looked up (then nothing else), the plain paths she said are not there, the program places she found (each program's first that she may execute). */
export interface LookUp {
  why?: string;
  missing: readonly NamedPath[];
  found: readonly string[];
}

const ANSWERED: LookUp = Object.freeze({ missing: [], found: [] });

/**
 * Whether file `$1` links MPI, as the user: an ELF file (its first 4 bytes the magic) naming
 * libmpi in its first 4 MiB (its dynamic section lies there). (Not dash's `read` for the magic: it
 * reads a byte a system call, up to the first newline, 8 KiB into /usr/bin/true.)
 */
const LINKS_MPI = `links() { case $(head -c 4 -- "$1" 2>/dev/null) in '\x7fELF') head -c ${4 << 20} -- "$1" 2>/dev/null | grep -qa libmpi ;; *) false ;; esac; }`;

/**
 * The look-up of `$p`, then a line out: `?path` is a program's place on PATH, passed over once one
 * was found (`found`: the line says `f`), `!path` its first; `%path` asks whether the program there
 * links MPI (`m`). A plain path not there says `n`.
 */
const LOOK_ONE = `case $p in '!'*) found=; p="?\${p#?}" ;; esac; case $p in '?'*) [ -n "$found" ] || { [ -f "\${p#?}" ] && [ -x "\${p#?}" ] && found=1 && printf f; } ;; '%'*) links "\${p#?}" && printf m ;; *) [ -e "$p" ] || printf n ;; esac; echo`;
/** The paths as arguments, once. */
const LOOK = `${LINKS_MPI}; for p do ${LOOK_ONE}; done`;
/** The paths on stdin, a line each, kept between jobs (an empty line ends a look-up). */
const LOOK_ON = `${LINKS_MPI}; while IFS= read -r p; do [ -z "$p" ] || { ${LOOK_ONE}; }; done`;

/** How a path goes to the look-up, on a line or as an argument. */
const lineOf = (p: NamedPath): string => (p.onPath === "first" ? `!${p.path}` : p.onPath ? `?${p.path}` : p.path);

/** The places of `name` in `PATH` (from `cwd`), as execvp tries them; itself when it has a slash. */
export function programPaths(name: string, cwd: string, PATH: string | undefined): NamedPath[] {
  if (name === "" || name.startsWith("/dev/fd/")) return [];
  if (name.includes("/")) return [{ what: "program", path: resolve(cwd, name), onPath: "first" }];
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

/** The answers read so far: a line's first letters each (what it says: `f`, `m`, `n`), up to `need` lines. */
class Answers {
  readonly lines: string[] = [];
  private line = "";
  private bytes = 0;
  constructor(private readonly need: number) {}
  get done(): boolean {
    return this.lines.length >= this.need;
  }
  /**
   * More than the answers can be (a few bytes a line): what she wrote into her look-up's output
   * herself. Not read on: each byte costs the agent's thread, and she could write for the whole
   * look-up's 10 s, with as many look-ups at once as she starts jobs.
   */
  get flooded(): boolean {
    return this.bytes > ANSWER_BYTES_MAX(this.need);
  }
  /** Takes `chunk`; whatever follows the last line needed, or the cap, is dropped. */
  take(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    if (this.flooded) return;
    for (const byte of chunk) {
      if (this.done) return;
      if (byte === 10) {
        this.lines.push(this.line);
        this.line = "";
      } else if (this.line.length < 4) this.line += String.fromCharCode(byte);
    }
  }
}

/** The most bytes a look-up of `lines` paths is read for: its answers are a line of at most 3 bytes each. */
const ANSWER_BYTES_MAX = (lines: number) => 4 * lines + 4096;

/** The answers to `need` lines `proc` wrote before it ended, or was killed after `seconds` (late). */
async function answers(proc: { stdout: ReadableStream<Uint8Array>; kill(signal: number): void }, seconds: number, need: number): Promise<Answered> {
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    proc.kill(9);
  }, seconds * 1000);
  const got = new Answers(need);
  try {
    for await (const chunk of proc.stdout) {
      got.take(chunk);
      if (got.done || got.flooded) break;
    }
  } finally {
    clearTimeout(timer);
    proc.kill(9);
  }
  return { lines: got.lines, late, flooded: got.flooded };
}

/** What a look-up process answered: a line's first letters each, whether it was killed for being late, whether it wrote too much (Answers). */
interface Answered {
  lines: string[];
  late: boolean;
  flooded: boolean;
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

  /** The answers to `lines`, and whether it was late; one that is not all answered ends it. */
  async ask(lines: string[], seconds: number): Promise<Answered> {
    this.busy = true;
    clearTimeout(this.idle);
    let late = false;
    const got = new Answers(lines.length);
    const timer = setTimeout(() => {
      late = true;
      this.end();
    }, seconds * 1000);
    try {
      this.proc.stdin.write(`${lines.join("\n")}\n\n`);
      this.proc.stdin.flush();
      while (!got.done && !got.flooded) {
        const { value, done } = await this.stdout.read();
        if (done) break;
        got.take(value);
      }
    } finally {
      clearTimeout(timer);
      this.busy = false;
      if (!got.done) this.end();
      else this.idle = setTimeout(() => this.end(), KEPT_IDLE_MS).unref();
    }
    return { lines: got.lines, late, flooded: got.flooded };
  }

  end(): void {
    clearTimeout(this.idle);
    this.proc.kill(9);
    this.gone(this);
  }
}

/**
 * How long a user's answer whether a program links MPI is taken again for the same path: a program
 * rebuilt there is asked about anew after it (until then its ranks get the CFG library, or not, as
 * the earlier build's answer said).
 */
const MPI_KEPT_MS = 30_000;
/** The most of those answers kept, all users' together (then forgotten at once, and asked again). */
const MPI_SAID_MAX = 256;

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
  private readonly vouched = new Map<number, { key: string; lines: Set<string>; found: readonly string[] }>();
  /** What each user said of a program's MPI linkage, by user and path, and when (MPI_KEPT_MS). */
  private readonly mpiSaid = new Map<string, { mpi: boolean; at: number }>();

  /**
   * What `id`'s look-up of `paths` found (LookUp): `why` when one did not answer within `seconds`
   * (`output file X did not answer within 10 s`), or the look-up ended before it answered (killed
   * by the user it runs as); nothing found when it could not be spawned (her job's own processes,
   * which touch the paths after it, then fail as they would have).
   */
  async lookUp(id: Identity | undefined, paths: readonly NamedPath[], seconds = PATH_ANSWER_SECONDS, job?: { vouch?: number; vouched?: number }): Promise<LookUp> {
    if (paths.length === 0) return ANSWERED;
    const lines = paths.map(lineOf);
    const key = keyOf(id);
    const v = job?.vouched === undefined ? undefined : this.vouched.get(job.vouched);
    if (v) {
      this.vouched.delete(job!.vouched!);
      if (v.key === key && lines.every((l) => v.lines.has(l))) return { missing: [], found: v.found };
    }
    let r: Answered;
    try {
      r = (await this.askKept(id, lines, seconds)) ?? (await answers(spawnAs(id, LOOK, lines, "ignore"), seconds, lines.length));
    } catch {
      return ANSWERED;
    }
    if (r.lines.length >= paths.length) {
      const found: LookUp = { missing: paths.filter((p, i) => !p.onPath && r.lines[i]!.includes("n")), found: paths.filter((p, i) => p.onPath && r.lines[i]!.includes("f")).map((p) => p.path) };
      if (job?.vouch !== undefined) this.vouched.set(job.vouch, { key, lines: new Set(lines), found: found.found });
      return found;
    }
    const hung = paths[r.lines.length]!;
    if (r.late) return { why: `${hung.what} ${hung.path} did not answer within ${seconds} s`, missing: [], found: [] };
    if (r.flooded) return { why: `${hung.what} ${hung.path} could not be looked up: the look-up process, as the job's user, wrote more than the ${ANSWER_BYTES_MAX(lines.length)} bytes its answers take`, missing: [], found: [] };
    // Not late but not answered: the user's look-up ended (she may kill her own processes). Going on
    // would start her job on a path nobody vouched for (only her processes would touch it, but the
    // look-up is there to fail it sooner, naming the path).
    return { why: `${hung.what} ${hung.path} could not be looked up: the look-up process, as the job's user, ended before it answered`, missing: [], found: [] };
  }

  /**
   * Whether the program at `path` links MPI, as `id` says (her look-up reads it: LINKS_MPI); false
   * when she does not answer within `seconds`. Her answer is kept MPI_KEPT_MS: a null job's look
   * cost a `head` and a `grep` of hers on the way to its start (4 agents, null jobs at load ~20:
   * 107 -> 29 a second).
   */
  async linksMpi(id: Identity | undefined, path: string, seconds = PATH_ANSWER_SECONDS): Promise<boolean> {
    const at = `${keyOf(id)}\0${path}`;
    const said = this.mpiSaid.get(at);
    if (said && performance.now() - said.at < MPI_KEPT_MS) return said.mpi;
    const line = `%${path}`;
    let r: Answered;
    try {
      r = (await this.askKept(id, [line], seconds)) ?? (await answers(spawnAs(id, LOOK, [line], "ignore"), seconds, 1));
    } catch {
      return false;
    }
    const mpi = r.lines[0]?.includes("m") === true;
    if (r.lines.length === 0) return mpi;
    if (this.mpiSaid.size >= MPI_SAID_MAX) this.mpiSaid.clear();
    this.mpiSaid.set(at, { mpi, at: performance.now() });
    return mpi;
  }

  /** The answers of an idle kept process of the user's; undefined when all are busy, a path cannot go on a line, or it ended before it answered (not late). */
  private async askKept(id: Identity | undefined, lines: string[], seconds: number): Promise<Answered | undefined> {
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
    return r && (r.late || r.flooded || r.lines.length >= lines.length) ? r : undefined;
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
