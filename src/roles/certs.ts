/**
 * The cluster CA of `ebb up --tls`: made once per state dir (STATE_DIR/ca.pem, public, what
 * clients trust; its key STATE_DIR/tls/ca.key, 0600), and certificates it signs for the controller
 * and each host's agents at every start (STATE_DIR/tls/NAME.pem and .key, 0600). Each certificate
 * names its role (DNS:ebb-controller, DNS:ebb-agent, see util/tls.ts) and the host's names and
 * addresses. Made with the openssl command (ECDSA P-256).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import { join } from "node:path";
import { ROLE_NAMES, type ServerTls, type TlsRole } from "../util/tls.ts";

const CA_DAYS = 3650;
const LEAF_DAYS = 825;

/** Runs openssl with umask 077, so that no key it writes is readable by others even for a moment. */
function openssl(args: string[], what: string): void {
  const r = Bun.spawnSync(["/bin/sh", "-c", 'umask 077; command -v openssl >/dev/null || exit 127; exec openssl "$@"', "openssl", ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  if (r.exitCode === 127) throw new Error("making the cluster's TLS certificates needs the openssl command; install it (Debian: apt-get install openssl)");
  if (r.exitCode !== 0) throw new Error(`openssl failed making ${what}: ${r.stderr.toString().trim().split("\n").at(-1) ?? `exit status ${r.exitCode}`}`);
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** A subject name safe for openssl's -subj (node names are [A-Za-z0-9._-], but be strict). */
const cn = (s: string) => s.replace(/[^A-Za-z0-9._ -]/g, "_").slice(0, 64);

export class ClusterCa {
  private constructor(
    readonly dir: string,
    /** The CA certificate (PEM): what clients and peers trust. */
    readonly pem: string,
    readonly caPath: string,
    private readonly keyPath: string,
  ) {}

  /** The state dir's CA, made when it has none. */
  static ensure(stateDir: string): ClusterCa {
    const dir = join(stateDir, "tls");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    const caPath = join(stateDir, "ca.pem");
    const keyPath = join(dir, "ca.key");
    if (!existsSync(caPath) || !existsSync(keyPath)) {
      const tmpKey = `${keyPath}.${process.pid}`;
      const tmpCa = `${caPath}.${process.pid}`;
      try {
        openssl(["req", "-x509", ...EC, "-keyout", tmpKey, "-out", tmpCa, "-days", String(CA_DAYS), "-subj", `/CN=${cn(`ebb cluster CA ${stateDir}`)}`], "the cluster CA");
        chmodSync(tmpKey, 0o600);
        writeFileSync(keyPath, readFileSync(tmpKey), { mode: 0o600 });
        writeFileSync(caPath, readFileSync(tmpCa), { mode: 0o644 });
      } finally {
        rmSync(tmpKey, { force: true });
        rmSync(tmpCa, { force: true });
      }
    }
    return new ClusterCa(dir, readFileSync(caPath, "utf8"), caPath, keyPath);
  }

  /**
   * A certificate for `role` on a host known by `names` (host names and addresses), saved as
   * tls/FILE.pem and tls/FILE.key.
   */
  issue(file: string, role: TlsRole, names: string[]): ServerTls {
    const alt = [`DNS:${ROLE_NAMES[role]}`, ...[...new Set(names.filter(Boolean))].map((n) => (isIP(n.replace(/^\[|\]$/g, "")) ? `IP:${n.replace(/^\[|\]$/g, "")}` : `DNS:${n}`))];
    const certPath = join(this.dir, `${file}.pem`);
    const keyPath = join(this.dir, `${file}.key`);
    rmSync(keyPath, { force: true });
    openssl(
      [
        "req", "-x509", "-CA", this.caPath, "-CAkey", this.keyPath, ...EC,
        "-keyout", keyPath, "-out", certPath, "-days", String(LEAF_DAYS),
        "-subj", `/CN=${cn(`${ROLE_NAMES[role]} ${names[0] ?? ""}`.trim())}`,
        "-addext", `subjectAltName=${alt.join(",")}`,
        "-addext", "basicConstraints=critical,CA:FALSE",
        "-addext", "keyUsage=critical,digitalSignature",
        "-addext", "extendedKeyUsage=serverAuth,clientAuth",
      ],
      `the certificate of ${file}`,
    );
    chmodSync(keyPath, 0o600);
    chmodSync(certPath, 0o600);
    return { cert: readFileSync(certPath, "utf8"), key: readFileSync(keyPath, "utf8") };
  }
}
