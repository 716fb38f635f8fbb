/**
 * A job's output and error files opened by the job's own first process, after the drop to its
 * user, as slurmstepd's child opens them after setuid: the agent's thread never opens, checks or
 * closes a path of the user's. Whatever lies at the path (a FIFO with no reader, a file system
 * that hangs after answering its look-up, path-probe.ts, or one whose look-up the user answered
 * herself through /proc/PID/fd/1 of her own process) then stalls only that process, hers, which
 * a cancel or the time limit kills (a FUSE or NFS wait ends on SIGKILL); every other job on the node
 * is served meanwhile.
 *
 * The shell truncates the files first unless `append`, then opens them for appending (another
 * process's appends to the same file, the step's other ranks or its root's writer, never write
 * over one another): stdout, then stderr (the same file when there is no error file), with the
 * umask the start gave it (the job's), then executes argv. A FIFO is
 * refused by name first, as before (it would hold her job until its time limit); an open that
 * fails says why on the process's stderr as it was started (the caller's pipe), exit 126.
 */

import { throughShell } from "../identity.ts";

export interface OutputFiles {
  out: string;
  /** The error file, when it is not `out`. */
  err?: string;
  append: boolean;
}

/** Output nobody keeps: nothing of the user's to open (the kernel's device, in root's /dev), so no process opens it for her. */
export const DISCARDED = "/dev/null";

/** Exit status of a start that could not open its files (as a program that cannot be executed). */
export const FILES_NOT_OPENED = 126;

const OPEN = `o=$1 e=$2 a=$3; shift 3
for f in "$o" "$e"; do [ -z "$f" ] || [ ! -p "$f" ] || { echo "output file $f is a FIFO: job output goes to regular files, or /dev/null, /dev/zero or /dev/full" >&2; exit ${FILES_NOT_OPENED}; }; done
[ "$a" = append ] || { command : >"$o" && { [ -z "$e" ] || command : >"$e"; }; } || exit ${FILES_NOT_OPENED}
command exec >>"$o" || exit ${FILES_NOT_OPENED}
if [ -z "$e" ]; then exec 2>&1; else command exec 2>>"$e"; fi || exit ${FILES_NOT_OPENED}
exec "$@"`;

/**
 * argv (and its environment, from the job's `env`) that opens `files` as stdout and stderr, as
 * whoever runs it, then executes `argv` (searched on the job's PATH); variables the shell would
 * not pass on unchanged (OPTIND, UID, ...) reach the program through `env` (identity.ts).
 */
export function openingFiles(files: OutputFiles, argv: readonly string[], env: Record<string, string>): { argv: string[]; env: Record<string, string> } {
  const shell = throughShell(env, argv);
  return { argv: ["/bin/sh", "-c", OPEN, "sh", files.out, files.err ?? "", files.append ? "append" : "truncate", ...shell.argv], env: shell.env };
}

/**
 * What a process wrote on `stream` before it closed it, at most `max` bytes (the rest is not read:
 * the process's own pipe, so a flood costs nothing), as text; or what it had written when `stop`
 * resolves (the pipe is then closed here: a copy of its write end that the user keeps open, taken
 * from her own process, holds neither the caller nor the agent's descriptor).
 */
export async function firstWords(stream: ReadableStream<Uint8Array> | null, stop?: Promise<unknown>, max = 4096): Promise<string> {
  if (!stream) return "";
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let got = 0;
  let stopped = false;
  void stop?.then(() => {
    stopped = true;
    void reader.cancel().catch(() => {});
  });
  try {
    while (got < max && !stopped) {
      const { value, done } = await reader.read();
      if (done) break;
      parts.push(value);
      got += value.length;
    }
  } catch {
    /* closed */
  } finally {
    void reader.cancel().catch(() => {});
  }
  return Buffer.concat(parts).subarray(0, max).toString("utf8");
}
