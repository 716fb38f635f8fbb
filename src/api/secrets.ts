/** Environment variables whose names look like they hold a secret, and their values masked. */

const SECRET_NAME = /TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;

export const looksSecret = (name: string): boolean => SECRET_NAME.test(name);

export const MASK = "********";

/** The environment with the value of every name that looks secret (*TOKEN*, *KEY*, *SECRET*, *PASSWORD*) replaced by a mask. */
export function maskSecrets(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, looksSecret(k) ? MASK : v]));
}
