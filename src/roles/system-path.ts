/**
 * Where the agent finds the system's own tools (setpriv, getent, id, and the sentinel's cat,
 * xargs, rmdir, sleep), whatever PATH the agent was started with or a job brings: neither may
 * decide whether a job can start or be cleaned up after.
 */
export const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The absolute path of a system tool (its bare name if it is not installed, for the error). */
export function systemTool(name: string): string {
  return Bun.which(name, { PATH: SYSTEM_PATH }) ?? name;
}
