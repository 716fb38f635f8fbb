/**
 * An environment like a login shell's, ~4.6 KB: paths, names, a few pseudo-random tokens (it
 * deflates ~2.2x, as a real one does). The same every call: for the job-text store's tests and
 * the controller's null-job A/B (bench/_ab-null-jobs.ts).
 */
export function shellLikeEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31).toString(36).slice(2);
  for (let i = 0; JSON.stringify(env).length < 4600; i++) {
    env[`VAR_${i}_${rand().slice(0, 4).toUpperCase()}`] = i % 4 === 0 ? `/usr/local/${rand()}/bin:/usr/bin:/bin:/opt/${rand()}/sbin` : i % 4 === 1 ? rand() + rand() : `/home/alice/${rand()}/${rand()}`;
  }
  return env;
}
