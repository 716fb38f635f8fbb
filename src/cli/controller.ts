import { existsSync } from "node:fs";
import { join } from "node:path";
import { defineCommand } from "./command.ts";
import { UsageError } from "./errors.ts";
import { readPem } from "../util/tls.ts";
import { startController } from "../roles/controller/index.ts";
import { jitPolicy, NORMAL, zodParsers } from "../util/jit.ts";
import { defaultStateDir, guard } from "./common.ts";
import { controllerTuning, listenFlag, serverTlsFlags, starting, stdinClosed, tlsArgs, tuning, untilSignal } from "./daemon.ts";
import { err } from "../util/stdio.ts";
import { currentLogFormat, logger } from "../util/log.ts";

export default defineCommand({
  meta: { name: "controller", description: "Run the controller: HTTP API, agent/launcher WebSockets, SQLite job store, scheduler" },
  args: {
    listen: { type: "string", description: "HOST:PORT to serve on (default 127.0.0.1:7700; 0.0.0.0:7700 for other hosts)", valueHint: "HOST:PORT" },
    db: { type: "string", description: "SQLite database file (default STATE_DIR/ebb.db)", valueHint: "PATH" },
    "state-dir": { type: "string", description: "Where the token, cluster key and database live (default $EBB_STATE_DIR or ~/.ebb)", valueHint: "DIR" },
    "tied-to-stdin": { type: "boolean", description: "Stop when stdin closes (how ebb up --controller-on-first starts the controller over ssh: the end of ebb up, or a dead link, stops it)" },
    ...tlsArgs,
    ca: { type: "string", description: "With --tls-cert: the cluster CA that signed the agents' certificates; an agent whose step port presents another is refused (default $EBB_CA, else ca.pem in the state dir)", valueHint: "FILE" },
    ...controllerTuning,
  },
  run: ({ args }) =>
    guard("controller", async () => {
      const where = { listen: listenFlag(args.listen ?? "127.0.0.1:7700"), stateDir: args["state-dir"] ?? defaultStateDir(), db: args.db };
      const opts = tuning(args);
      const tls = serverTlsFlags(args);
      const ca = agentsCa(args.ca, where.stateDir, tls !== undefined);
      const ctl = await starting(where, () => startController({ listen: where.listen, stateDir: where.stateDir, dbPath: args.db, ...opts, tls: tls && { ...tls, ca: ca! } }));
      jitPolicy(NORMAL);
      zodParsers();
      const banner = `API ${ctl.url}/v1, token in ${ctl.stateDir}/token, cluster key in ${ctl.stateDir}/cluster.key`;
      if (currentLogFormat() === "json") logger("controller").info(banner, { url: ctl.url, stateDir: ctl.stateDir });
      else err(`ebb controller: ${banner}\n`);
      await (args["tied-to-stdin"] ? Promise.race([untilSignal(), stdinClosed().then(() => logger("controller").warn("stdin closed (ebb up ended, or its ssh link is gone); stopping"))]) : untilSignal());
      await ctl.stop();
      if (args["tied-to-stdin"]) process.exit(0);
    }),
});

/** The cluster CA (PEM) agents' certificates are checked against: --ca, else $EBB_CA, else the state dir's ca.pem. */
function agentsCa(flag: string | undefined, stateDir: string, tls: boolean): string | undefined {
  if (!tls) {
    if (flag !== undefined) throw new UsageError("--ca goes with --tls-cert/--tls-key: it is the CA the agents' certificates are checked against");
    return undefined;
  }
  const path = flag ?? (process.env.EBB_CA || (existsSync(join(stateDir, "ca.pem")) ? join(stateDir, "ca.pem") : undefined));
  if (path === undefined)
    throw new UsageError(`with --tls-cert the controller checks the agents' certificates against the cluster CA: give it with --ca FILE or EBB_CA (ebb up --tls writes it to STATE_DIR/ca.pem; looked in ${stateDir})`);
  try {
    return readPem(path, flag !== undefined ? "--ca" : process.env.EBB_CA ? "EBB_CA" : "the state dir's CA", "CERTIFICATE");
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}
