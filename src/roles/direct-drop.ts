/**
 * A job's process started as its user with no program of ebb's in between: the spawn itself drops
 * to the user (Bun.spawn's uid and gid: setgid, setuid, no supplementary groups, between fork and
 * exec), and everything the post-drop shell did for it (identity.ts runAs) is done here first:
 *
 * - the working directory is entered by the agent's thread with the user's effective ids
 *   (thread-ids.ts), in a working directory of the thread's own (unshare(CLONE_FS)), which the
 *   child inherits: the directory the user could enter, held, not a path root follows later;
 * - the job's umask is the thread's for the spawn (the same fs_struct holds it);
 * - the program is looked up in the job's PATH with the user's rights (stat as the user), never
 *   root's, and started by its path (argv[0] stays as the job wrote it);
 * - the user's process limit (user-procs.ts) is the agent process's own RLIMIT_NPROC, which root
 *   is exempt from and every child inherits.
 *
 * Between fork and exec the child runs only the spawn's own code; the job's environment reaches
 * its program alone, already the user's. Undefined (`directDrop`) where any piece is missing: the
 * caller then starts the shell (setpriv or the spawn's drop, identity.ts).
 */
import { FFIType, read } from "bun:ffi";
import { statSync, type Stats } from "node:fs";
import { join } from "node:path";
import { getSystemErrorName } from "node:util";
import { libcSymbols } from "../util/libc.ts";
import { asUser, type Identity } from "./identity.ts";
import { RLIMIT_NPROC, USER_PROCS } from "./user-procs.ts";

type Libc = {
  unshare(flags: number): number;
  chdir(path: Uint8Array): number;
  fchdir(fd: number): number;
  open(path: Uint8Array, flags: number): number;
  umask(mask: number): number;
  getrlimit(resource: number, limit: BigUint64Array): number;
  setrlimit(resource: number, limit: BigUint64Array): number;
  __errno_location(): number;
};

const CLONE_FS = 0x200;
const O_PATH_DIRECTORY = 0o10000000 | 0o200000 | 0o2000000; // O_PATH | O_DIRECTORY | O_CLOEXEC

let libc: Libc | null | undefined;
/** This thread's own fs (module state is per thread: each worker loads its own): the directory to come back to. */
let home: number | undefined;

function lib(): Libc | null {
  if (libc !== undefined) return libc;
  const { i32, u32, ptr: p } = FFIType;
  libc =
    libcSymbols<Libc>({
      unshare: { args: [i32], returns: i32 },
      chdir: { args: [p], returns: i32 },
      fchdir: { args: [i32], returns: i32 },
      open: { args: [p, i32], returns: i32 },
      umask: { args: [u32], returns: u32 },
      getrlimit: { args: [i32, p], returns: i32 },
      setrlimit: { args: [i32, p], returns: i32 },
      __errno_location: { args: [], returns: p },
    }) ?? null;
  return libc;
}

const cString = (s: string) => new TextEncoder().encode(`${s}\0`);
function errnoError(errno: number, what: string, path: string): NodeJS.ErrnoException {
  const code = getSystemErrorName(-errno);
  return Object.assign(new Error(`${code}: ${what} '${path}'`), { code, errno, syscall: what, path });
}

/** The user's process limit as the agent process's own (root is exempt from it; children inherit it), once. */
let limited = false;
function limitUserProcs(c: Libc): boolean {
  if (limited) return true;
  const cur = new BigUint64Array(2);
  if (c.getrlimit(RLIMIT_NPROC, cur) !== 0) return false;
  const want = BigInt(USER_PROCS) < cur[1]! ? BigInt(USER_PROCS) : cur[1]!;
  if (c.setrlimit(RLIMIT_NPROC, new BigUint64Array([want, want])) !== 0) return false;
  return (limited = true);
}

/** This thread with an fs of its own (cwd, umask), once; false where the kernel or libc refuse. */
function ownFs(c: Libc): boolean {
  if (home !== undefined) return true;
  if (c.unshare(CLONE_FS) !== 0) return false;
  const fd = c.open(cString("."), O_PATH_DIRECTORY);
  if (fd < 0) return false;
  home = fd;
  return true;
}

/** Whether `mode` (of a file owned by uid/gid) lets `id` execute it. */
function executableBy(id: Identity, st: { mode: number; uid: number; gid: number }): boolean {
  if ((st.mode & 0o170000) !== 0o100000) return false;
  if (st.uid === id.uid) return (st.mode & 0o100) !== 0;
  if (st.gid === id.gid || id.groups.includes(st.gid)) return (st.mode & 0o010) !== 0;
  return (st.mode & 0o001) !== 0;
}

/**
 * Where `name` is for `id`, as execvp finds it: a name with a slash as it is (relative to the
 * directory the thread is in), else the first file of that name in PATH that `id` may execute,
 * looked at with `id`'s rights. Throws ENOENT naming it when there is none, EACCES when the only
 * ones are files she may not execute.
 */
function programFor(id: Identity, name: string, path: string | undefined): string {
  // The child's own descriptor (a batch script as fd 3): nothing of the agent's to look at.
  if (name.startsWith("/dev/fd/")) return name;
  // Always a path with a slash: a bare name (PATH's "" or ".") would have the spawn search PATH again, as root.
  const inDir = (dir: string) => {
    const file = join(dir || ".", name);
    return file.includes("/") ? file : `./${file}`;
  };
  const candidates = name.includes("/") ? [name] : name === "" ? [] : (path ?? "/usr/local/bin:/usr/bin:/bin").split(":").map(inDir);
  let denied = false;
  // With her ids for the whole walk: a file she may not see (a directory on the way she may not search) is not there for her, as for the shell's `command -v`.
  const found = asUser(id, () =>
    candidates.find((file) => {
      let st: Stats | undefined;
      try {
        // A directory without the name answers undefined: a thrown ENOENT cost ~16 µs more a
        // directory of the agent's thread (its JIT reluctant), ~10 of a PATH's 11 per user job.
        st = statSync(file, { throwIfNoEntry: false });
      } catch {
        return false;
      }
      if (st === undefined) return false;
      if (executableBy(id, st)) return true;
      denied = true;
      return false;
    }),
  );
  if (found !== undefined) return found;
  const code = denied ? "EACCES" : "ENOENT";
  throw Object.assign(new Error(`${code}: ${denied ? "permission denied" : "no such file or directory"}, posix_spawn '${name}'`), { code, path: name });
}

/**
 * The most directories of a job's PATH the agent's thread searches for a program (here, and for the
 * MPI check, agent/cfg-lib.ts). A 128 KiB PATH (the most a process starts with) holds 65,536: ~120 ms
 * of the agent's CPU a rank. A program on a longer PATH is started by the shell (identity.ts), which
 * searches it after the drop, in the child, as the user.
 */
export const PATH_DIRS_SEARCHED = 1024;

/** Whether `path` has more than PATH_DIRS_SEARCHED directories. */
function longPath(path: string | undefined): boolean {
  if (path === undefined || path.length <= PATH_DIRS_SEARCHED) return false;
  let colons = 0;
  for (let i = path.indexOf(":"); i >= 0; i = path.indexOf(":", i + 1)) if (++colons >= PATH_DIRS_SEARCHED) return true;
  return false;
}

/**
 * programFor, once per turn of the thread for the same user, directory, name and PATH: a step's
 * ranks on a node start in one turn and look up the same program (1,024 ranks x 1,024 directories
 * was a million stats in one turn). The answer (or the error) is forgotten at the turn's end.
 */
let turn: Map<string, { program: string } | { error: unknown }> | undefined;
function lookedUp(id: Identity, cwd: string, name: string, path: string | undefined): string {
  if (name.includes("/")) return programFor(id, name, path);
  if (!turn) {
    turn = new Map();
    setImmediate(() => (turn = undefined));
  }
  const key = `${id.uid}:${id.gid}\0${cwd}\0${name}\0${path}`;
  let known = turn.get(key);
  if (!known) {
    try {
      known = { program: programFor(id, name, path) };
    } catch (error) {
      known = { error };
    }
    turn.set(key, known);
  }
  if ("error" in known) throw known.error;
  return known.program;
}

export interface DirectDrop {
  /** Runs `spawn(cmd, argv0)` (Bun.spawn with the ids, the job's environment, no cwd) with the thread in the job's directory and umask; the thread's own back after. */
  start<T>(spawn: (cmd: string[], argv0: string) => T): T;
}

/**
 * How to start `argv` as `id` in `cwd` with the job's umask `mask` (undefined: the agent's) and no
 * shell; undefined where this thread cannot (no own fs, no libc). Throws, as a spawn would
 * (ENOENT, EACCES), when the user cannot enter `cwd` or has no such program.
 */
export function directDrop(id: Identity, cwd: string, argv: readonly string[], env: Record<string, string>, mask: number | undefined): DirectDrop | undefined {
  if (!argv[0]!.includes("/") && longPath(env.PATH)) return undefined;
  const c = lib();
  if (!c || !ownFs(c) || !limitUserProcs(c)) return undefined;
  return {
    start(spawn) {
      const dir = cString(cwd);
      let program: string;
      try {
        // The directory entered and the program found in one switch to her ids (programFor's own is then no switch).
        program = asUser(id, () => {
          if (c.chdir(dir) !== 0) throw errnoError(read.i32(c.__errno_location() as never, 0), "chdir", cwd);
          return lookedUp(id, cwd, argv[0]!, env.PATH);
        });
      } catch (e) {
        c.fchdir(home!);
        throw e;
      }
      const old = mask === undefined ? undefined : c.umask(mask);
      try {
        return spawn([program, ...argv.slice(1)], argv[0]!);
      } finally {
        if (old !== undefined) c.umask(old);
        c.fchdir(home!);
      }
    },
  };
}

