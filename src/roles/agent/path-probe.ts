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
 * What it does not cover: a path that answers the look-up and hangs just after (a file system
 * that stops answering in between, or a FUSE daemon that answers only some requests).
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
  /** One of a program's places on PATH: looked up until the first executable file, as execvp. */
  onPath?: boolean;
}

/**
 * One line out per path looked up; `?path` is a PATH candidate, passed over once one was found. An
 * answer (exists or not, allowed or not) is all that is asked.
 */
const LOOK = `found=; for p do case $p in '?'*) [ -n "$found" ] || { [ -f "\${p#?}" ] && [ -x "\${p#?}" ] && found=1; } ;; *) [ -e "$p" ] ;; esac; echo; done`;

/** The places of `name` in `PATH` (from `cwd`), as execvp tries them; itself when it has a slash. */
export function programPaths(name: string, cwd: string, PATH: string | undefined): NamedPath[] {
  if (name === "" || name.startsWith("/dev/fd/")) return [];
  if (name.includes("/")) return [{ what: "program", path: resolve(cwd, name) }];
  const dirs = (PATH ?? "/usr/local/bin:/usr/bin:/bin").split(":", PATH_DIRS_SEARCHED);
  return dirs.map((dir) => ({ what: `program ${name}: PATH directory`, path: resolve(cwd, join(dir || ".", name)), onPath: true }));
}

/**
 * Undefined when every path answered within `seconds` (or the look-up could not run: the touch
 * after it then fails as it would have); else why not, `output file X did not answer within 10 s`.
 */
export async function unanswered(id: Identity | undefined, paths: readonly NamedPath[], seconds = PATH_ANSWER_SECONDS): Promise<string | undefined> {
  if (paths.length === 0) return undefined;
  const argv = ["/bin/sh", "-c", LOOK, "sh", ...paths.map((p) => (p.onPath ? `?${p.path}` : p.path))];
  const bySpawn = id !== undefined && dropsBySpawn(id);
  let proc;
  try {
    proc = Bun.spawn(id && !bySpawn ? runAsArgv(id, "/", argv) : argv, {
      cwd: "/",
      env: { PATH: SYSTEM_PATH },
      stdio: ["ignore", "pipe", "ignore"],
      ...(bySpawn ? { uid: id.uid, gid: id.gid } : {}),
    });
  } catch {
    return undefined;
  }
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    proc.kill("SIGKILL");
  }, seconds * 1000);
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  clearTimeout(timer);
  const answered = out.split("\n").length - 1;
  if (!late || answered >= paths.length) return undefined;
  const hung = paths[answered]!;
  return `${hung.what} ${hung.path} did not answer within ${seconds} s`;
}
