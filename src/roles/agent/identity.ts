/**
 * Whom a job's processes run as. An agent running as root runs them as the job's user (uid, gid,
 * supplementary groups; through setpriv, after the cgroup is joined) and opens their output files
 * with that user's rights (effective ids switched around the open), so a path with `../` reaches
 * only what the user may write. An agent not running as root runs everything as itself.
 */
import { chownSync } from "node:fs";
import { SYSTEM_PATH, systemTool } from "./system-path.ts";

export interface Identity {
  user: string;
  uid: number;
  gid: number;
  groups: number[];
  home: string;
}

export const agentIsRoot = (): boolean => process.getuid?.() === 0;

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

/** argv that becomes `id` (all its groups) and then enters `cwd` with that user's rights before running `argv`. */
export function runAsArgv(id: Identity, cwd: string, argv: readonly string[]): string[] {
  const groups = id.groups.length > 0 ? [`--groups=${id.groups.join(",")}`] : ["--clear-groups"];
  return [systemTool("setpriv"), `--reuid=${id.uid}`, `--regid=${id.gid}`, ...groups, "--", "/bin/sh", "-c", 'cd -- "$0" || exit 126; exec "$@"', cwd, ...argv];
}

/** Runs `fn` (opening files) with the user's effective ids and groups, then back to root's. */
export function asUser<T>(id: Identity | undefined, fn: () => T): T {
  if (!id) return fn();
  const p = process as unknown as { setgroups(g: number[]): void; setegid(g: number): void; seteuid(u: number): void; getgroups(): number[] };
  const groups = p.getgroups();
  p.setgroups(id.groups.length > 0 ? id.groups : [id.gid]);
  p.setegid(id.gid);
  p.seteuid(id.uid);
  try {
    return fn();
  } finally {
    p.seteuid(0);
    p.setegid(0);
    p.setgroups(groups);
  }
}

/** A file the agent made for the job (its batch script) becomes the user's. */
export function giveTo(id: Identity | undefined, path: string): void {
  if (id) chownSync(path, id.uid, id.gid);
}
