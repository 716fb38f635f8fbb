/** Agent connections: registration, heartbeats, job reports; nodes that go quiet go DOWN. */
import { AgentToController, MAX_CLOCK_SKEW_MS, REFUSED, type ControllerToAgent } from "../../proto/agent.ts";
import { decode } from "../../proto/channel.ts";
import { protocolRefusal } from "../../proto/version.ts";
import { NAMES_MAX } from "../../pmi/limits.ts";
import type { Db } from "../../store/db.ts";
import { setNodeDrain, setNodeOwner, setNodeStatus, upsertNode } from "../../store/nodes.ts";
import { StoreUnavailable } from "../../store/db.ts";
import { logger } from "../../util/log.ts";
import type { Elastic } from "./elastic.ts";
import type { Jobs } from "./jobs.ts";
import { programReport } from "./program.ts";
import { ClusterState, type AgentSession } from "./state.ts";
import { unreachable } from "./reach.ts";
import type { StoreHealth } from "./storage.ts";

const log = logger("controller");

type Report = { node: string; msg: ExitReport | UsageReport; at: number };

type Hello = Extract<AgentToController, { t: "hello" }>;
type ExitReport = Extract<AgentToController, { t: "job.exit" }>;
type UsageReport = Extract<AgentToController, { t: "job.usage" }>;

const hostOf = (addr: string) => addr.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");

/** A WebSocket close reason fits in 123 bytes. */
const closeReason = (s: string) => (Buffer.byteLength(s) <= 123 ? s : `${Buffer.from(s).subarray(0, 120).toString("utf8").replace(/\uFFFD$/, "")}...`);

export class AgentHub {
  private readonly byConn = new Map<AgentSession, string>();
  /** Connections whose hello is being checked, with what they sent meanwhile. */
  private readonly joining = new Map<AgentSession, (string | Buffer)[]>();

  /** How often heartbeats are judged: a node is DOWN at most an eighth of a heartbeat after its third missed one. */
  readonly checkEveryMs: number;
  /** When heartbeats were last judged. */
  private lastCheck = Date.now();
  /** Set when the whole cluster stops with this controller (`ebb up`): its agents' going is not a node's failure. */
  private stopping = false;

  constructor(
    private readonly db: Db,
    private readonly state: ClusterState,
    private readonly jobs: Jobs,
    private readonly heartbeatMs: number,
    private readonly schedule: () => void,
    private readonly elastic: Elastic,
    private readonly health: StoreHealth,
    /** In a TLS cluster, the cluster CA: an agent's step port must present a certificate it signed. */
    private readonly agentCa: string | undefined,
    private readonly onNodeUp?: (name: string) => void,
  ) {
    this.checkEveryMs = Math.max(20, Math.min(250, heartbeatMs / 8));
  }

  send(node: string, msg: ControllerToAgent): boolean {
    const session = this.state.nodes.get(node)?.session;
    if (!session) return false;
    this.syncAllocation(node);
    session.send(msg);
    return true;
  }

  /** The jobs each agent was last told its node holds (their ids, in the node's order). */
  private readonly told = new Map<AgentSession, string>();

  /**
   * Tell the node's agent every job it holds now, each with its user and its share of the node
   * (`shares`), if that set changed since it was last told. A job's share of a node does not
   * change while it holds it, so the set of job ids says when to tell. True if it told it now.
   */
  syncAllocation(node: string): boolean {
    const n = this.state.nodes.get(node);
    const session = n?.session;
    if (!n || !session) return false;
    let key = "";
    for (const id of n.shares.keys()) key += `${id},`;
    if (this.told.get(session) === key) return false;
    this.told.set(session, key);
    const jobs = [...n.shares].map(([jobId, s]) => ({ jobId, user: this.state.jobs.get(jobId)?.row.user ?? null, share: { cores: [...s.cores], memMiB: s.memMiB, gpus: [...s.gpus] } }));
    session.send({ t: "shares", jobs });
    return true;
  }

  /** Every node's agent (or those of `nodes`) told its node's job, where that changed. */
  syncAllocations(nodes: Iterable<string> = this.state.nodes.keys()): void {
    for (const name of nodes) this.syncAllocation(name);
  }

  onMessage(conn: AgentSession, text: string | Buffer): void {
    const waiting = this.joining.get(conn);
    if (waiting) return void waiting.push(text);
    const d = decode(AgentToController, text);
    if (!d.ok) {
      log.warn(`refused an agent from ${conn.remote}: invalid message`, { error: d.error });
      conn.close(REFUSED.badMessage, closeReason(`invalid message: ${d.error}`));
      return;
    }
    const msg = d.value;
    // Any other message (and a report that takes its own path) comes after the reports before it, as the agents sent them.
    if ((msg.t !== "job.exit" && msg.t !== "job.usage") || (msg.t === "job.exit" && msg.lostNode !== undefined) || (msg.t === "job.usage" && msg.oomKills > 0)) this.recordReports();
    if (msg.t === "hello") {
      this.joining.set(conn, []);
      void this.admit(conn, msg);
      return;
    }
    const name = this.byConn.get(conn);
    const node = name ? this.state.nodes.get(name) : undefined;
    if (!name || !node || node.session !== conn) {
      conn.close(REFUSED.badMessage, "send hello first");
      return;
    }
    const now = Date.now();
    node.lastSeen = now;
    switch (msg.t) {
      case "heartbeat":
        return;
      case "host.state": {
        const { t: _, ...host } = msg;
        const changed = node.host?.state !== host.state;
        node.host = host;
        if (changed) {
          log.info(`node ${name} is ${host.state}${host.rule ? `: ${host.rule}` : ""}`, { node: name, inputs: host.inputs });
          this.schedule();
        }
        return;
      }
      case "job.exit":
        // A command job's usage on its first node comes inside its exit: taken as the job.usage just before it.
        if (msg.usage) this.usageReport(name, { t: "job.usage", jobId: msg.jobId, ...msg.usage }, now);
        if (msg.lostNode === undefined) return this.queueReport(name, msg, now);
        this.recordReports(); // that usage first, as when it came alone
        return this.exited(name, msg, now);
      case "perf":
        // Samples: those that come while the store takes no writes are not kept.
        this.health.quietly(() => this.elastic.perf(msg.jobId, name, msg));
        return;
      case "program": {
        const job = this.state.jobs.get(msg.jobId);
        if (job?.nodes.includes(name) && job.row.state === "RUNNING") {
          programReport(job, msg);
          // Kept in the job's row (rank 0 reports at most once a second): a controller restart
          // still knows the structure and where the program is.
          this.health.orLater(`program:${job.row.id}`, () => this.jobs.saveProgram(job));
        }
        return;
      }
      case "job.cleaned":
        this.jobs.cleaned(name, msg.jobId);
        return;
      case "job.usage":
        return this.usageReport(name, msg, now);
      case "names": {
        const job = this.state.jobs.get(msg.jobId);
        if (!job?.nodes.includes(name)) return conn.send({ t: "names.result", reqId: msg.reqId, ok: false });
        const names = (job.names ??= new Map());
        const reply = (ok: boolean, port?: string) => conn.send({ t: "names.result", reqId: msg.reqId, ok, port });
        if (msg.op === "lookup") return names.has(msg.service) ? reply(true, names.get(msg.service)) : reply(false);
        if (msg.op === "unpublish") return reply(names.delete(msg.service));
        if (names.has(msg.service) || msg.port === undefined) return reply(false);
        if (names.size >= NAMES_MAX)
          return conn.send({ t: "names.result", reqId: msg.reqId, ok: false, error: `job ${msg.jobId} has ${NAMES_MAX} services published, the most a job may (ebb's cap NAMES_MAX): unpublish one first` });
        names.set(msg.service, msg.port);
        return reply(true);
      }
    }
  }

  /** A job's end from its first node. */
  private exited(node: string, msg: ExitReport, now: number): void {
    // A job.kill just sent to this node acknowledges the exit too (one message fewer per job).
    // Kept for later while the store takes no writes, and not acknowledged: the agent re-sends it if we restart.
    this.health.orLater(`exit:${msg.jobId}`, () => {
      if (!this.jobs.exited(msg.jobId, msg.exitCode, msg.message, msg.lostNode, now, msg.run, msg.gone ? node : undefined).includes(node)) this.answer(node, msg);
    });
  }

  /**
   * The answer to an exit report the node was sent no job.kill for: the node's shares without the
   * job when the report said the job has nothing left there (`gone`) and it has left the node (one
   * message for the job's end: no job.kill, no job.ack), sent now or, for a turn's reports
   * (`told`), once for all of them; else a job.ack.
   */
  private answer(node: string, msg: ExitReport, told?: Set<string>): void {
    if (msg.gone && !this.state.nodes.get(node)?.shares.has(msg.jobId) && (told?.has(node) || this.syncAllocation(node))) return void told?.add(node);
    this.ack(node, msg.jobId);
  }

  /** A usage report: with the turn's reports, or, with an OOM kill (it may end the job), on its own after them. */
  private usageReport(node: string, msg: UsageReport, now: number): void {
    if (msg.oomKills === 0) return this.queueReport(node, msg, now);
    this.recordReports();
    this.used(node, msg, now);
  }

  /** What a job used on a node. Kept for later while the store takes no writes: it may end the job (an OOM kill). */
  private used(node: string, msg: UsageReport, now: number): void {
    this.health.orLater(`usage:${msg.jobId}:${node}`, () => this.jobs.usage(node, msg, now));
  }

  private ack(node: string, jobId: number): void {
    this.state.nodes.get(node)?.session?.send({ t: "job.ack", jobId });
  }

  /** The job.exit and job.usage reports read in this event-loop turn, not yet recorded. */
  private reports: Report[] = [];

  /**
   * Jobs' ends and usage reports are recorded together, once the turn's messages are read (or
   * before the next message of another kind): one transaction for all, where one each wrote the
   * same pages to the WAL again (jobs.ts `recordReports`). An exit naming a lost node and an OOM
   * kill take their own paths, one at a time.
   */
  private queueReport(node: string, msg: ExitReport | UsageReport, at: number): void {
    if (this.reports.length === 0) setImmediate(() => this.recordReports());
    this.reports.push({ node, msg, at });
  }

  /**
   * Records the reports waiting for their turn's transaction now (also at a stop, before the store
   * closes). A one-node job's usage report followed by its exit is written with the end (jobs.ts
   * `recordReports`): the agent sends a command job's usage with its exit, in one batch.
   */
  recordReports(): void {
    const reports = this.reports;
    this.reports = [];
    if (reports.length === 0) return;
    const one = (r: Report) => (r.msg.t === "job.exit" ? this.exited(r.node, r.msg, r.at) : this.used(r.node, r.msg, r.at));
    if (!this.health.writable) return reports.forEach(one);
    let killed: string[][];
    try {
      // The turn's reports share its time (the latest of them).
      killed = this.jobs.recordReports(
        reports.map((r) => (r.msg.t === "job.exit" ? { exit: r.msg, ...(r.msg.gone ? { spared: r.node } : {}) } : { usage: { ...r.msg, node: r.node } })),
        reports.at(-1)!.at,
      );
    } catch (e) {
      if (!(e instanceof StoreUnavailable)) throw e;
      // Nothing was recorded: each is kept for later, as alone.
      return reports.forEach(one);
    }
    const exits = reports.filter((r) => r.msg.t === "job.exit");
    // Nodes told their shares after these reports came: that answers each of their gone exits.
    const told = new Set<string>();
    exits.forEach((r, i) => {
      if (!killed[i]!.includes(r.node)) this.answer(r.node, r.msg as ExitReport, told);
    });
  }

  onClose(conn: AgentSession): void {
    this.joining.delete(conn);
    const name = this.byConn.get(conn);
    this.byConn.delete(conn);
    this.told.delete(conn);
    if (!name) return;
    const node = this.state.nodes.get(name);
    if (node?.session === conn) {
      node.session = undefined;
      log.info(`agent ${name} disconnected; DOWN unless it is back within ${(3 * this.heartbeatMs) / 1000} s`, { node: name });
      // Not at the next tick but when its three heartbeats are up: a lost agent is DOWN on time.
      const due = node.lastSeen + 3 * this.heartbeatMs + 1 - Date.now();
      setTimeout(() => this.checkHeartbeats(), Math.max(0, due)).unref?.();
    }
  }

  /** Checks a hello (clock, advertised address), then registers the node or refuses it with the reason. */
  private async admit(conn: AgentSession, msg: Hello): Promise<void> {
    const why = await this.refusal(msg, conn);
    const queued = this.joining.get(conn);
    this.joining.delete(conn);
    if (!queued) return; // the connection closed meanwhile
    if (why) {
      log.warn(`refused agent ${msg.name} from ${conn.remote}: ${why}`);
      conn.close(REFUSED.refused, closeReason(why));
      return;
    }
    if (!this.hello(conn, msg)) return;
    for (const text of queued) this.onMessage(conn, text);
  }

  private async refusal(msg: Hello, conn: AgentSession): Promise<string | undefined> {
    const protocol = protocolRefusal("agent", msg.protocol, msg.version);
    if (protocol) return protocol;
    if (msg.time !== undefined) {
      const skew = msg.time - Date.now();
      if (Math.abs(skew) > MAX_CLOCK_SKEW_MS)
        return `its clock is ${Math.round(Math.abs(skew) / 1000)} s ${skew > 0 ? "ahead of" : "behind"} the controller's (limit ${MAX_CLOCK_SKEW_MS / 1000} s); sync the clocks (NTP)`;
    }
    // The agent's own listening socket on the address it connected from (or an agent of this
    // process) needs no reachability check; in a TLS cluster its certificate is checked all the same.
    const own = !msg.advertised && (conn.inProcess === true || hostOf(msg.addr) === conn.remote.replace(/^::ffff:/, ""));
    return own && this.agentCa === undefined ? undefined : await unreachable(msg.addr, this.agentCa);
  }

  private hello(conn: AgentSession, msg: Hello): boolean {
    const now = Date.now();
    const existing = this.state.nodes.get(msg.name);
    if (existing?.session && existing.session !== conn && now - existing.lastSeen < this.heartbeatMs * 1.5) {
      log.warn(`refused agent ${msg.name} from ${conn.remote}: the name is in use by a live agent from ${existing.session.remote}`);
      conn.close(REFUSED.nameTaken, closeReason(`node name ${msg.name} is already connected from ${existing.session.remote}; pick another --name`));
      return false;
    }
    existing?.session?.close(REFUSED.nameTaken, "replaced by a newer connection of the same node");
    const wasDown = existing?.row.status === "DOWN";
    const row = {
      name: msg.name,
      cpus: msg.cpus,
      memoryMb: msg.memoryMb,
      gpus: msg.gpus ?? [],
      features: msg.features ?? [],
      addr: msg.addr,
      status: "UP" as const,
      reason: null,
      drain: existing?.row.drain ?? null,
      ownerSince: existing?.row.ownerSince ?? null,
      registeredAt: existing?.row.registeredAt ?? now,
      updatedAt: now,
    };
    const node = existing ?? ClusterState.node(row, now);
    node.row = row;
    // While the store takes no writes, the node runs on what memory knows; its row is written after.
    this.health.orLater(`node:${msg.name}`, () => upsertNode(this.db, node.row));
    node.session = conn;
    node.lastSeen = now;
    node.runAs = msg.runAs;
    this.state.nodes.set(msg.name, node);
    this.byConn.set(conn, msg.name);

    // Processes of jobs that are no longer active on this node must go.
    const kill = msg.jobs.filter((id) => this.state.jobs.get(id)?.nodes.includes(msg.name) !== true);
    conn.send({ t: "welcome", heartbeatMs: this.heartbeatMs, kill });
    // A batch or command job whose first node came back without it has lost its processes.
    const reported = new Set(msg.jobs);
    for (const job of [...this.state.jobs.values()]) {
      if (this.jobs.driverNode(job) === msg.name && job.row.state !== "PENDING" && !reported.has(job.row.id))
        this.health.orLater(`lost:${job.row.id}`, () => this.jobs.finish(job, "NODE_FAIL", { reason: `node ${msg.name} re-registered without the job's processes` }));
    }
    log.info(`node ${msg.name} ${existing ? (wasDown ? "is back UP" : "re-registered") : "registered"}`, { node: msg.name, addr: msg.addr, cpus: msg.cpus, from: conn.remote });
    this.schedule();
    this.onNodeUp?.(msg.name);
    return true;
  }

  /**
   * Drain a node (it takes no new work; its jobs run on), or with `reason` null resume it. With
   * `owner` the node is not drained but its host state is `owner` (rule "ebb drain --owner")
   * whatever its agent reports, until resumed: it takes no new work and its jobs move off as from an
   * overloaded node (sched/moves.ts); kept in its row across a controller restart. False: no such node.
   */
  setDrain(name: string, reason: string | null, owner = false): boolean {
    const node = this.state.nodes.get(name);
    if (!node) return false;
    const now = Date.now();
    if (owner && reason !== null) {
      const since = node.row.ownerSince ?? now;
      setNodeOwner(this.db, name, since, now);
      node.row = { ...node.row, ownerSince: since, updatedAt: now };
      log.info(`node ${name} is its owner's: ${reason}`);
      this.schedule();
      return true;
    }
    const wasOwner = node.row.ownerSince !== null;
    setNodeDrain(this.db, name, reason, now);
    node.row = { ...node.row, drain: reason, ownerSince: reason === null ? null : node.row.ownerSince, updatedAt: now };
    log.info(reason === null ? `node ${name} resumed` : `node ${name} drained: ${reason}`);
    if (reason === null || wasOwner) this.schedule();
    return true;
  }

  /**
   * Nodes silent for 3 heartbeat intervals go DOWN and their jobs NODE_FAIL (not while the store
   * takes no writes). Silence is counted in the controller's own running time: if the last check
   * was longer ago than the checks' interval, the controller's loop was blocked meanwhile (the
   * heartbeats that came are still unread in their sockets, and timers run before those are read),
   * so every node's lastSeen moves on by that much before any is judged. A node that really went
   * quiet during a stall is DOWN that much later.
   */
  checkHeartbeats(now = Date.now()): void {
    if (this.stopping) return;
    const stalled = now - this.lastCheck - this.checkEveryMs;
    this.lastCheck = now;
    if (stalled > 0) {
      if (stalled > this.heartbeatMs) log.warn(`the controller did not run for ${(stalled / 1000).toFixed(1)} s; heartbeats are counted from when it could read them`);
      for (const node of this.state.nodes.values()) node.lastSeen = Math.max(node.lastSeen, Math.min(now, node.lastSeen + stalled));
    }
    this.health.quietly(() => this.checkSilent(now));
  }

  /** No node is judged any more: the cluster is stopping with this controller (`ebb up`). */
  stopJudging(): void {
    this.stopping = true;
  }

  private checkSilent(now: number): void {
    for (const node of this.state.nodes.values()) {
      if (node.row.status !== "UP" || now - node.lastSeen <= 3 * this.heartbeatMs) continue;
      const reason = `no heartbeat for ${((now - node.lastSeen) / 1000).toFixed(1)} s`;
      setNodeStatus(this.db, node.row.name, "DOWN", reason, now);
      node.row = { ...node.row, status: "DOWN", reason, updatedAt: now };
      node.completing.clear();
      log.warn(`node ${node.row.name} is DOWN: ${reason}`, { node: node.row.name });
      // An elastic job whose survivors can go on adapts past the node; any other job fails with it.
      const jobIds = [...node.shares.keys()];
      this.health.orLater(`down:${node.row.name}`, () => {
        for (const id of jobIds) if (!this.elastic.fault(id, node.row.name, "stopped responding")) this.jobs.nodeFailed(id, node.row.name, "stopped responding");
      });
      node.session?.close(4408, "heartbeat timeout");
      node.session = undefined;
    }
  }
}
