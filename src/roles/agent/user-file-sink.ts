/**
 * A command job's output file on its first node, written by a process of the job's user: `cat`,
 * started as her (setpriv, with the system PATH only), in the job's directory and umask, after its
 * own shell opened the file (output-after-drop.ts). The agent writes only to that process's stdin,
 * asynchronously (Bun's FileSink polls the pipe): a file system that hangs, or whatever she put at
 * the path, stalls her writer, never the agent's thread. What is not yet written holds the step's
 * output acknowledgements (`drained`), so her ranks wait and the agent holds at most their output
 * window. The writer is the agent's, not the job's: the job's signals do not reach it; it ends
 * with its input, or is killed WRITER_END_SECONDS after (a FUSE or NFS wait ends on SIGKILL).
 * Output to DISCARDED has no writer: it is dropped here.
 */
import type { FileSink, Subprocess } from "bun";
import { lineSink, type FlushableSink } from "../launcher/index.ts";
import { DISCARDED, firstWords, openingFiles, type OutputFiles } from "./output-after-drop.ts";
import { runAsArgv, type Identity } from "../identity.ts";
import { umaskOf } from "../job-umask.ts";
import { SYSTEM_PATH } from "../system-path.ts";

/** How long a job's end waits for its writers to have written everything; then they are killed. */
export const WRITER_END_SECONDS = 10;

interface Writer {
  proc: Subprocess<"pipe", "ignore", "pipe">;
  sink: FileSink;
  /** A flush not yet done, if any. */
  pending?: Promise<void>;
}

export interface UserFileSink extends FlushableSink {
  /** Undefined once every file is open; else why one could not be. */
  opened: Promise<string | undefined>;
  /** Ends the writers' input and waits for them to end, WRITER_END_SECONDS at most, then kills them. */
  close(): Promise<void>;
}

/** `cat` to `path` from `cwd`, as `runAs` (the agent's own user when undefined), with the job's umask from `env`; undefined for DISCARDED. */
function startWriter(path: string, append: boolean, cwd: string, env: Record<string, string>, runAs: Identity | undefined): Writer | undefined {
  if (path === DISCARDED) return undefined;
  const mask = umaskOf(env);
  // One shell (after setpriv's, as root) enters the directory, takes the umask, opens the file and becomes cat.
  const [sh, c, open, ...args] = openingFiles({ out: path, append }, ["cat"], { PATH: SYSTEM_PATH }).argv;
  const script = `${mask === undefined ? "" : `umask 0${mask.toString(8)} || exit 126; `}${open}`;
  const argv = runAs ? runAsArgv(runAs, cwd, [sh!, c!, script, ...args]) : [sh!, c!, `cd -- "$WRITER_DIR" || exit 126; ${script}`, ...args];
  const proc = Bun.spawn(argv, { cwd: "/", env: runAs ? { PATH: SYSTEM_PATH } : { PATH: SYSTEM_PATH, WRITER_DIR: cwd }, stdio: ["pipe", "ignore", "pipe"] });
  return { proc, sink: proc.stdin };
}

/** The job's output (and error) file, written by processes of its user (the sink a command job's step root writes to). */
export function userFileSink(files: OutputFiles, job: { cwd: string; env: Record<string, string>; runAs?: Identity }): UserFileSink {
  const out = startWriter(files.out, files.append, job.cwd, job.env, job.runAs);
  const err = files.err === undefined ? out : startWriter(files.err, files.append, job.cwd, job.env, job.runAs);
  const writers = [...new Set([out, err])].filter((w) => w !== undefined);
  const write = (fd: 1 | 2, text: string) => {
    const w = fd === 2 ? err : out;
    if (!w) return;
    try {
      w.sink.write(text);
      const flushed = w.sink.flush();
      if (flushed instanceof Promise) {
        const pending: Promise<void> = flushed.then(
          () => void (w.pending === pending && (w.pending = undefined)),
          () => void (w.pending = undefined),
        );
        w.pending = pending;
      }
    } catch {
      /* the writer is gone: nothing is held for it */
    }
  };
  const lines = lineSink(write);
  return {
    ...lines,
    // Its stderr is the pipe until it has opened the file: EOF with nothing said is the file open.
    opened: Promise.all(writers.map((w) => firstWords(w.proc.stderr, w.proc.exited.then(() => Bun.sleep(1000))))).then((said) => said.map((s) => s.trim()).find((s) => s !== "") || undefined),
    drained: () => {
      const pending = writers.flatMap((w) => (w.pending ? [w.pending] : []));
      return pending.length > 0 ? Promise.all(pending).then(() => {}) : undefined;
    },
    close: async () => {
      lines.flush();
      for (const w of writers) void Promise.resolve().then(() => w.sink.end()).catch(() => {});
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.all(writers.map((w) => w.proc.exited)), new Promise((resolve) => (timer = setTimeout(resolve, WRITER_END_SECONDS * 1000)))]);
      clearTimeout(timer);
      for (const w of writers) w.proc.kill(9);
    },
  };
}
