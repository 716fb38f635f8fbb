/**
 * TLS settings shared by every role: what a server presents (certificate + key, PEM) and what a
 * client trusts (the cluster's CA, PEM). A cluster CA issues certificates whose subjectAltName
 * carries the role (DNS:ebb-controller, DNS:ebb-agent) besides the host's names: peers reach each
 * other at addresses nobody knows when the certificates are made (the address ssh came from, a
 * guessed interface), so a client accepts a certificate that the CA signed and that either names
 * the host it connected to (the usual check) or carries the role it expects.
 */
import { readFileSync } from "node:fs";
import type { PeerCertificate } from "node:tls";

/** What a TLS server presents. */
export interface ServerTls {
  cert: string;
  key: string;
}

/** The subjectAltName names of the roles, in certificates a cluster CA issues. */
export const ROLE_NAMES = { controller: "ebb-controller", agent: "ebb-agent" } as const;
export type TlsRole = keyof typeof ROLE_NAMES;

/** Options for fetch and WebSocket (Bun's `tls`) that trust only `ca` and accept `role`'s certificates. */
export function clientTls(ca: string, role: TlsRole): { ca: string; checkServerIdentity(host: string, cert: PeerCertificate): Error | undefined } {
  const name = ROLE_NAMES[role];
  return {
    ca,
    checkServerIdentity: (host, cert) => {
      // Loaded at the first TLS handshake: node:tls (and node:crypto with it) costs every client
      // command ~20 ms of CPU to load, and most clusters speak plain HTTP on loopback.
      const { checkServerIdentity } = require("node:tls") as typeof import("node:tls");
      const usual = checkServerIdentity(host, cert);
      if (!usual) return undefined;
      const names = (cert.subjectaltname ?? "").split(/,\s*/);
      return names.includes(`DNS:${name}`) ? undefined : usual;
    },
  };
}

/** A PEM file's text, or why it cannot be used (naming the flag). */
export function readPem(path: string, flag: string, kind: "CERTIFICATE" | "PRIVATE KEY"): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new Error(`${flag} ${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const re = kind === "CERTIFICATE" ? /-----BEGIN CERTIFICATE-----/ : /-----BEGIN ([A-Z]+ )?PRIVATE KEY-----/;
  if (!re.test(text)) throw new Error(`${flag} ${path}: not a PEM ${kind.toLowerCase()} (no "-----BEGIN ${kind}-----" line)`);
  return text;
}

/** Error codes of a TLS handshake that failed to verify the peer (Bun/BoringSSL and node names). */
const VERIFY = /CERT|UNABLE_TO_VERIFY|SELF_SIGNED|ALTNAME|UNABLE_TO_GET_ISSUER|certificate/i;

/** Whether an error (of fetch or a WebSocket) says the peer's certificate was not trusted. */
export function isCertificateError(text: string): boolean {
  return VERIFY.test(text);
}
