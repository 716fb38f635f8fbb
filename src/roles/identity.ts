/**
 * Whom a job's processes run as. An agent running as root runs them as the job's user (uid, gid,
 * supplementary groups; dropped to by the spawn itself or through setpriv, with a clean
 * environment, after the cgroup is joined; the job's environment and directory are taken after
 * the drop) and opens their files with that user's rights (the thread's effective ids switched
 * around the open). An agent not running as root runs everything as itself. What a root agent
 * does for a job, item by item: README.md.
 */
import { chownSync } from "node:fs";
import { APPLY_UMASK_SH } from "./job-umask.ts";
import { LIMIT_USER_PROCS_SH } from "./user-procs.ts";
import { SYSTEM_PATH, systemTool } from "./system-path.ts";
import { setThreadEgid, setThreadEuid, setThreadGroups } from "./thread-ids.ts";

export interface Identity {
  user: string;
  uid: number;
  gid: number;
  groups: number[];
  home: string;
}

/** Read once: the real uid of a process of ebb never changes (asUser switches the effective ids only); one getuid less per call, a dozen per job. */
const agentUid = process.getuid?.();
const isRoot = agentUid === 0;
export const agentIsRoot = (): boolean => isRoot;
/** The agent's own (real) uid, read once: whom a job runs as when identityFor gives none. */
export const ownUid = (): number => agentUid!;

const cache = new Map<string, { id: Identity; at: number }>();

function text(argv: string[]): string | undefined {
  const p = Bun.spawnSync(argv, { stdout: "pipe", stderr: "ignore", env: { PATH: SYSTEM_PATH } });
  return p.exitCode === 0 ? p.stdout.toString().trim() : undefined;
}

/** The user's ids from the system's user database (getent, so NSS sources count too). */
export function lookupIdentity(user: string): Identity {
  const hit = cache.get(user);
  if (hit && Date.now() - hit.at < 30_000) return hit.id;
  const pw = text(["getent", "passwd", user]);
  if (!pw) throw new Error(`user ${user} does not exist on this node`);
  const f = pw.split(":");
  const groups = (text(["id", "-G", user]) ?? "").split(/\s+/).filter(Boolean).map(Number);
  const id = { user, uid: Number(f[2]), gid: Number(f[3]), groups, home: f[5] ?? "/" };
  cache.set(user, { id, at: Date.now() });
  return id;
}

/** Whom to run a job of `user` as: undefined means as the agent itself. */
export function identityFor(user: string | null | undefined): Identity | undefined {
  if (!agentIsRoot() || !user || user === "root") return undefined;
  return lookupIdentity(user);
}

/**
 * Names the post-drop shell cannot take through `export` without failing or changing itself: not
 * shell identifiers (exported bash functions, `BASH_FUNC_name%%`), or variables a POSIX shell or
 * bash as sh keeps read-only or checks. They reach the program through `env` on its command line.
 */
const SHELL_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SHELL_OWNED = new Set(["UID", "EUID", "PPID", "GROUPS", "SHELLOPTS", "BASHOPTS", "BASH_VERSINFO", "BASHPID", "BASH_SUBSHELL", "OPTIND", "LINENO"]);

/** Whether a shell started with `name` in its environment passes it on unchanged: else it goes on `env`'s command line. */
const shellCarries = (name: string): boolean => SHELL_IDENTIFIER.test(name) && !SHELL_OWNED.has(name);

/**
 * `env` and `argv` for a shell that executes `argv` in the end: what the shell cannot carry
 * (shellCarries) is taken out of `env` and given to the program through `env NAME=value`.
 */
export function throughShell(env: Record<string, string>, argv: readonly string[]): { env: Record<string, string>; argv: readonly string[] } {
  const names = Object.keys(env).filter((k) => !shellCarries(k));
  if (names.length === 0) return { env, argv };
  const carried = { ...env };
  for (const k of names) delete carried[k];
  return { env: carried, argv: [systemTool("env"), ...names.map((k) => `${k}=${env[k]}`), ...argv] };
}

/** `'text'` for sh: nothing inside single quotes is special but the quote itself. */
const shQuote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;

/** After the drop, as the user: the user's process limit (user-procs.ts), the directory entered with the user's rights, then the program. */
const ENTER = `${LIMIT_USER_PROCS_SH}; cd -- "$0" || exit 126; exec "$@"`;
/**
 * The same, taking the job's environment from stdin first (and its umask from it); the program's
 * stdin is then /dev/null, or descriptor `from` (3 or 4: the launcher's standard input, forwarded).
 * The shell starts with a clean environment, so it reads no ENV, BASH_ENV or SHELLOPTS.
 */
const takeEnvAndEnter = (from?: 3 | 4) => `. /dev/stdin || exit 126; exec ${from === undefined ? "</dev/null" : `<&${from} ${from}<&-`}; ${APPLY_UMASK_SH}; ${ENTER}`;

function setpriv(id: Identity, script: string, cwd: string, argv: readonly string[]): string[] {
  const groups = id.groups.length > 0 ? [`--groups=${id.groups.join(",")}`] : ["--clear-groups"];
  return [systemTool("setpriv"), `--reuid=${id.uid}`, `--regid=${id.gid}`, ...groups, "--", "/bin/sh", "-c", script, cwd, ...argv];
}

/**
 * argv that becomes `id` (all its groups), then enters `cwd` with that user's rights and runs
 * `argv`. Only for a command whose environment the caller wrote itself, with nothing of the
 * user's in it (setpriv runs as root with it); a job's environment goes through `runAs`.
 */
export function runAsArgv(id: Identity, cwd: string, argv: readonly string[]): string[] {
  return setpriv(id, ENTER, cwd, argv);
}

export interface RunAs {
  argv: string[];
  /** The environment of the first process (setpriv's, or the shell's): nothing of the job's reaches a process that runs as root. */
  env: Record<string, string>;
  /** The job's environment as sh `export` lines, read after the drop (the process's stdin). */
  stdin: Uint8Array;
  /** Ids the spawn itself takes before it executes anything (Bun.spawn's uid and gid): then argv starts at the shell, without setpriv. */
  ids?: { uid: number; gid: number };
}

/**
 * Whether the spawn may drop to `id` by itself (Bun.spawn's uid and gid: setgid, setuid, and no
 * supplementary groups, before the exec), one exec fewer than setpriv and half a user's process
 * start: only for a user with no group but their own (spawn sets none). The caller says too whether
 * nothing runs as root before the user's first process (runAs's `spawnDrops`: no shell joining
 * cgroups first).
 */
export const dropsBySpawn = (id: Identity): boolean => id.groups.every((g) => g === id.gid);

/**
 * How a root agent starts `argv` as `id` in `cwd` with the job's environment `env`: setpriv, run
 * with a fixed environment, becomes the user (uid, gid, all their groups) and executes /bin/sh,
 * which takes the job's environment, enters `cwd` with the user's rights, and executes the
 * program. The dynamic loader of setpriv never sees LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT,
 * GCONV_PATH or GLIBC_TUNABLES of the job's; the program's loader sees them, as the user. Where
 * the spawn drops to the user itself (`dropsBySpawn`), the shell is the first program, already
 * the user's, with the same fixed environment.
 */
export function runAs(id: Identity, cwd: string, argv: readonly string[], env: Record<string, string>, stdinFrom?: 3 | 4, spawnDrops = false): RunAs {
  const shell = throughShell(env, argv);
  const program = shell.argv;
  const stdin = new TextEncoder().encode(Object.entries(shell.env).map(([k, v]) => `export ${k}=${shQuote(v)}\n`).join(""));
  const script = takeEnvAndEnter(stdinFrom);
  if (spawnDrops && dropsBySpawn(id)) return { argv: ["/bin/sh", "-c", script, cwd, ...program], env: { PATH: SYSTEM_PATH }, stdin, ids: { uid: id.uid, gid: id.gid } };
  return { argv: setpriv(id, script, cwd, program), env: { PATH: SYSTEM_PATH }, stdin };
}

/** The identity asUser has switched this thread to now (module state is per thread: each Worker loads its own). */
let switchedTo: Identity | undefined;

/** How many asUser calls are running on this thread now (each restores what it changed). */
let depth = 0;
/**
 * The thread's own supplementary groups, read at the first switch with no other running (~4 µs,
 * two getgroups, for each switch): only asUser changes them (thread-ids.ts), and every switch
 * puts them back, so with no switch running they are still these.
 */
let ownGroups: number[] | undefined;

const sameIds = (a: Identity, b: Identity): boolean => a.uid === b.uid && a.gid === b.gid && a.groups.join() === b.groups.join();

/**
 * Runs `fn` (opening files) with the user's effective ids and groups, then back to root's: on this
 * thread only (thread-ids.ts), so that agents on other threads of the process keep their own.
 * `fn` must be synchronous: the ids are the thread's until it returns.
 *
 * Two switches are skipped, each giving the thread exactly the rights it had with them (a user's
 * job made ~10 switches of 8 system calls each, ~80 of the ~190 system calls it cost the agent
 * beyond a root's job):
 * - inside a switch to the same user (a caller that does several things as her in one go), `fn`
 *   just runs;
 * - the supplementary groups, where the user has none but her own gid and the thread has none:
 *   the kernel's group checks (in_group_p) count the effective gid and the supplementary list, so
 *   an empty list with her gid as the effective one allows what `[gid]` does.
 */
export function asUser<T>(id: Identity | undefined, fn: () => T): T {
  if (!id || (switchedTo !== undefined && sameIds(switchedTo, id))) return fn();
  const groups = depth === 0 ? (ownGroups ??= process.getgroups?.() ?? []) : (process.getgroups?.() ?? []);
  const setsGroups = !(groups.length === 0 && dropsBySpawn(id));
  if (setsGroups) setThreadGroups(id.groups.length > 0 ? id.groups : [id.gid]);
  try {
    setThreadEgid(id.gid);
    try {
      setThreadEuid(id.uid);
      try {
        switchedTo = id;
        depth++;
        return fn();
      } finally {
        // Back to root's ids, also inside another user's switch (as before): known as no one's.
        switchedTo = undefined;
        depth--;
        setThreadEuid(0);
      }
    } finally {
      setThreadEgid(0);
    }
  } finally {
    if (setsGroups) setThreadGroups(groups);
  }
}

/** A file the agent made for the job (its batch script) becomes the user's. */
export function giveTo(id: Identity | undefined, path: string): void {
  if (id) chownSync(path, id.uid, id.gid);
}
