/**
 * The ssh command lines and remote scripts of `ebb up --hosts`: the system's OpenSSH client (so
 * ~/.ssh/config, agents and keys work as for the user's own ssh), POSIX sh on the far side. The
 * cluster key goes on ssh's stdin, never in an argument: it would show in `ps` on both ends.
 */
import type { HostSpec } from "./hosts.ts";

/** Splits --ssh-opts like a shell would: spaces separate words, quotes group them. */
export function splitWords(text: string): string[] | { error: string } {
  const words: string[] = [];
  let cur: string | undefined;
  let quote: string | undefined;
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = undefined;
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      cur ??= "";
    } else if (/\s/.test(ch)) {
      if (cur !== undefined) words.push(cur);
      cur = undefined;
    } else cur = (cur ?? "") + ch;
  }
  if (quote) return { error: `unbalanced ${quote} in "${text}"` };
  if (cur !== undefined) words.push(cur);
  return words;
}

/** A word quoted for a POSIX shell (and for fish, which reads '...'\''...' the same way). */
export const shq = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

export interface SshSettings {
  /** Extra ssh options, e.g. ["-F", "cfg"] or ["-o", "ProxyJump=gw"]. */
  opts: string[];
  user?: string;
}

/** ssh's argv for one host and one remote command line (run by the remote user's shell). */
export function sshArgv(h: HostSpec, s: SshSettings, remote: string): string[] {
  const user = h.user ?? s.user;
  return [
    "ssh",
    // Never a password prompt: a host that wants one fails with ssh's own message.
    "-o", "BatchMode=yes",
    // A dead link ends the session (and, on the far side, the agent reading its stdin).
    "-o", "ServerAliveInterval=5",
    "-o", "ServerAliveCountMax=3",
    "-T",
    ...(user ? ["-l", user] : []),
    ...(h.port ? ["-p", String(h.port)] : []),
    ...s.opts,
    "--",
    h.host,
    remote,
  ];
}

/** `sh -c SCRIPT`, so that the remote login shell (bash, zsh, fish...) only has to run sh. */
const viaSh = (script: string) => `sh -c ${shq(script)}`;

/** Makes a relative remote path relative to the remote home, in $p. */
const remotePath = (path: string) => `p=${shq(path)}; case $p in /*) ;; *) p="$HOME/$p";; esac`;

/** Exit status of the start script when the binary there is missing or differs: copy, then start again. */
export const NEED_COPY = 86;

export interface AgentScript {
  remotePath: string;
  sha256: string;
  name: string;
  /** The controller's host, when not where the ssh connection came from ($SSH_CONNECTION). Its port comes on stdin, after the key. */
  controllerHost?: string;
  cpus?: number;
  logLevel: string;
  /** TLS: the CA, the host's certificate and its key follow on stdin (base64, a line each), and the controller is https. */
  tls?: boolean;
  /** The agent's configuration file (`ebb up --agent-config`: host rules) follows on stdin, after the TLS lines (base64, one line). */
  config?: boolean;
}

/**
 * Reads `names` from stdin, a base64 line each, into files of the same names in "$tls" (0600);
 * PEM files are several lines, and secrets never go in an argument.
 */
const readTlsFiles = (names: string[]) => [
  `umask 077; mkdir -p "$tls" || exit 1`,
  ...names.map((n) => `IFS= read -r b || exit 87; printf '%s' "$b" | base64 -d > "$tls/${n}" || exit 1`),
];

/**
 * Exits NEED_COPY unless the binary at $p has this sha256. Hashing ~100 MB at every start costs
 * (0.3 s idle, seconds on a loaded host), so a match is remembered in $p.sha256 with the file's
 * inode: a binary replaced since (a new inode, or a newer mtime than the stamp) is hashed again.
 */
const hashCheck = (sha256: string) => [
  `i=$(ls -i "$p" 2>/dev/null)`,
  `if [ "$(cat "$p.sha256" 2>/dev/null)" != "${sha256} $i" ] || [ "$p" -nt "$p.sha256" ]; then`,
  `  h=$( (sha256sum "$p" || shasum -a 256 "$p") 2>/dev/null | cut -d" " -f1)`,
  `  [ "$h" = ${sha256} ] || exit ${NEED_COPY}`,
  `  { echo "$h $i" > "$p.sha256"; } 2>/dev/null`,
  `fi`,
];

/** $c: where the ssh connection came from; $s: the address it reached this host at (IPv6 in brackets). */
const sshAddresses = [`set -- $SSH_CONNECTION; c=$1; s=$3`, `case $c in *:*) c="[$c]";; esac; case $s in *:*) s="[$s]";; esac`];

/** What the controller script prints on stdout before it starts the controller: the address ssh reached the host at. */
export const SERVER_ADDR = "ebb-ssh-server-address";

export interface ControllerScript {
  remotePath: string;
  sha256: string;
  /** The controller's listen address there; undefined host: all addresses (its URL then names the one ssh reached). */
  listenHost?: string;
  port: number;
  /** Controller flags passed on (tuning: --heartbeat 1 ...). */
  flags: string[];
  logLevel: string;
  /** TLS: the cluster CA, its certificate and its key follow the token on stdin (base64, a line each). */
  tls?: boolean;
}

/**
 * `ebb up --controller-on-first`: checks the binary's hash, reads the cluster key and the API
 * token from stdin into the controller's state dir (`$p.d/controller`, mode 0600; never an
 * argument), prints the address ssh reached the host at, and execs the controller, which stops
 * when its stdin (the ssh session) closes.
 */
export function controllerCommand(a: ControllerScript): string {
  const listen = a.listenHost ? `${shq(a.listenHost)}:${a.port}` : `0.0.0.0:${a.port}`;
  return viaSh(
    [
      remotePath(a.remotePath),
      ...hashCheck(a.sha256),
      ...sshAddresses,
      `d="$p.d/controller"`,
      `umask 077; mkdir -p "$d" || exit 1`,
      `IFS= read -r k || exit 87; IFS= read -r t || exit 87`,
      `printf '%s\\n' "$k" > "$d/cluster.key" && printf '%s\\n' "$t" > "$d/token" || exit 1`,
      ...(a.tls ? [`tls="$d/tls"`, ...readTlsFiles(["ca.pem", "cert.pem", "key.pem"])] : []),
      `echo ${SERVER_ADDR} "$s"`,
      `export EBB_LOG=${shq(a.logLevel)}`,
      `exec "$p" controller --listen ${listen} --state-dir "$d" --tied-to-stdin${a.tls ? ` --tls-cert "$tls/cert.pem" --tls-key "$tls/key.pem" --ca "$tls/ca.pem"` : ""}${a.flags.map((f) => ` ${shq(f)}`).join("")}`,
    ].join("\n"),
  );
}

/**
 * Checks the binary's hash, reads the cluster key and then the controller's port from stdin, and execs the agent: it listens on
 * the address ssh reached the host at, reaches the controller at the address ssh came from, and
 * stops when its stdin (the ssh session) closes.
 */
export function agentCommand(a: AgentScript): string {
  const scheme = a.tls ? "https" : "http";
  const controllerUrl = a.controllerHost ? `${shq(`${scheme}://${a.controllerHost}:`)}"$port"` : `"${scheme}://$c:$port"`;
  return viaSh(
    [
      remotePath(a.remotePath),
      ...hashCheck(a.sha256),
      ...sshAddresses,
      `IFS= read -r EBB_CLUSTER_KEY || exit 87`,
      // The controller's port: ebb up starts this session while the controller is starting.
      `IFS= read -r port || exit 87`,
      `case $port in ''|*[!0-9]*) echo "ebb up sent no controller port" >&2; exit 87;; esac`,
      ...(a.tls ? [`tls="$p.d/${a.name}/tls"`, ...readTlsFiles(["ca.pem", "cert.pem", "key.pem"])] : []),
      ...(a.config ? [`cfg="$p.d/${a.name}/agent.json"`, `umask 077; mkdir -p "$p.d/${a.name}" || exit 1`, `IFS= read -r b || exit 87; printf '%s' "$b" | base64 -d > "$cfg" || exit 1`] : []),
      `export EBB_CLUSTER_KEY EBB_LOG=${shq(a.logLevel)}`,
      `exec "$p" agent --controller ${controllerUrl} --name ${shq(a.name)} --listen "$s:0" --state-dir "$p.d/${a.name}" --tied-to-stdin${a.cpus ? ` --cpus ${a.cpus}` : ""}${a.tls ? ` --tls-cert "$tls/cert.pem" --tls-key "$tls/key.pem" --ca "$tls/ca.pem"` : ""}${a.config ? ` --config "$cfg"` : ""}`,
    ].join("\n"),
  );
}

/**
 * Receives the binary on stdin and puts it at the remote path atomically (a running one is not
 * disturbed), only if all `size` bytes came: a copy cut short (Ctrl-C, a dead link) leaves nothing.
 */
export function copyCommand(path: string, size: number): string {
  return viaSh(
    [
      remotePath(path),
      `t="$p.part.$$"; mkdir -p "$(dirname "$p")" && cat > "$t" || { rm -f "$t"; exit 1; }`,
      `n=$(wc -c < "$t"); if [ "$n" -ne ${size} ]; then rm -f "$t"; echo "received $n of ${size} bytes" >&2; exit 1; fi`,
      `chmod 755 "$t" && mv -f "$t" "$p"`,
    ].join("\n"),
  );
}
