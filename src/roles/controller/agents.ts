/** Agent connections: registration, heartbeats, job reports; nodes that go quiet go DOWN. */
import { AgentToController, type ControllerToAgent } from "../../proto/agent.ts";
import { decode } from "../../proto/channel.ts";
import type { Db } from "../../store/db.ts";
import { setNodeStatus, upsertNode } from "../../store/nodes.ts";
import { logger } from "../../util/log.ts";
import type { Elastic } from "./elastic.ts";
import type { Jobs } from "./jobs.ts";
import { programReport } from "./program.ts";
import type { AgentSession, ClusterState } from "./state.ts";

const log = logger("controller");

/** WebSocket close codes an agent acts on. */
export const CLOSE_NAME_TAKEN = 4409;
export const CLOSE_BAD_MESSAGE = 4400;

export class AgentHub {
  private readonly byConn = new Map<AgentSession, string>();

  constructor(
    private readonly db: Db,
    private readonly state: ClusterState,
    private readonly jobs: Jobs,
    private readonly heartbeatMs: number,
    private readonly schedule: () => void,
    private readonly elastic: Elastic,
  ) {}

  send(node: string, msg: ControllerToAgent): boolean {
    const session = this.state.nodes.get(node)?.session;
    if (!session) return false;
    session.send(msg);
    return true;
  }

  onMessage(conn: AgentSession, text: string | Buffer): void {
    const d = decode(AgentToController, text);
    if (!d.ok) {
      log.warn("invalid message from agent", { remote: conn.remote, error: d.error });
      conn.close(CLOSE_BAD_MESSAGE, `invalid message: ${d.error}`.slice(0, 120));
      return;
    }
    const msg = d.value;
    if (msg.t === "hello") return this.hello(conn, msg);
    const name = this.byConn.get(conn);
    const node = name ? this.state.nodes.get(name) : undefined;
    if (!name || !node || node.session !== conn) {
      conn.close(CLOSE_BAD_MESSAGE, "send hello first");
      return;
    }
    node.lastSeen = Date.now();
    switch (msg.t) {
      case "heartbeat":
        return;
      case "job.exit":
        // A job.kill just sent to this node acknowledges the exit too (one message fewer per job).
        if (!this.jobs.exited(msg.jobId, msg.exitCode, msg.message, msg.lostNode).includes(name)) conn.send({ t: "job.ack", jobId: msg.jobId });
        return;
      case "perf":
        this.elastic.perf(msg.jobId, name, msg);
        return;
      case "program": {
        const job = this.state.jobs.get(msg.jobId);
        if (job?.nodes.includes(name) && job.row.state === "RUNNING") programReport(job, msg);
        return;
      }
      case "job.cleaned":
        this.jobs.cleaned(name, msg.jobId);
        return;
      case "names": {
        const job = this.state.jobs.get(msg.jobId);
        if (!job?.nodes.includes(name)) return conn.send({ t: "names.result", reqId: msg.reqId, ok: false });
        const names = (job.names ??= new Map());
        const reply = (ok: boolean, port?: string) => conn.send({ t: "names.result", reqId: msg.reqId, ok, port });
        if (msg.op === "lookup") return names.has(msg.service) ? reply(true, names.get(msg.service)) : reply(false);
        if (msg.op === "unpublish") return reply(names.delete(msg.service));
        if (names.has(msg.service) || msg.port === undefined) return reply(false);
        names.set(msg.service, msg.port);
        return reply(true);
      }
    }
  }

  onClose(conn: AgentSession): void {
    const name = this.byConn.get(conn);
    this.byConn.delete(conn);
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

  private hello(conn: AgentSession, msg: Extract<AgentToController, { t: "hello" }>): void {
    const now = Date.now();
    const existing = this.state.nodes.get(msg.name);
    if (existing?.session && existing.session !== conn && now - existing.lastSeen < this.heartbeatMs * 1.5) {
      conn.close(CLOSE_NAME_TAKEN, `node name ${msg.name} is already connected from ${existing.session.remote}; pick another --name`);
      return;
    }
    existing?.session?.close(CLOSE_NAME_TAKEN, "replaced by a newer connection of the same node");
    const wasDown = existing?.row.status === "DOWN";
    const row = { name: msg.name, cpus: msg.cpus, memoryMb: msg.memoryMb, addr: msg.addr, status: "UP" as const, reason: null, registeredAt: existing?.row.registeredAt ?? now, updatedAt: now };
    upsertNode(this.db, row);
    const node = existing ?? { row, lastSeen: now };
    node.row = row;
    node.session = conn;
    node.lastSeen = now;
    this.state.nodes.set(msg.name, node);
    this.byConn.set(conn, msg.name);

    // Processes of jobs that are no longer active on this node must go.
    const kill = msg.jobs.filter((id) => this.state.jobs.get(id)?.nodes.includes(msg.name) !== true);
    conn.send({ t: "welcome", heartbeatMs: this.heartbeatMs, kill });
    // A batch or command job whose first node came back without it has lost its processes.
    const reported = new Set(msg.jobs);
    for (const job of [...this.state.jobs.values()]) {
      if (job.row.kind !== "alloc" && job.nodes[0] === msg.name && job.row.state !== "PENDING" && !reported.has(job.row.id))
        this.jobs.finish(job, "NODE_FAIL", { reason: `node ${msg.name} re-registered without the job's processes` });
    }
    log.info(`node ${msg.name} ${existing ? (wasDown ? "is back UP" : "re-registered") : "registered"}`, { node: msg.name, addr: msg.addr, cpus: msg.cpus });
    this.schedule();
  }

  /** Nodes silent for 3 heartbeat intervals go DOWN and their jobs NODE_FAIL. */
  checkHeartbeats(now = Date.now()): void {
    for (const node of this.state.nodes.values()) {
      if (node.row.status !== "UP" || now - node.lastSeen <= 3 * this.heartbeatMs) continue;
      const reason = `no heartbeat for ${((now - node.lastSeen) / 1000).toFixed(1)} s`;
      setNodeStatus(this.db, node.row.name, "DOWN", reason, now);
      node.row = { ...node.row, status: "DOWN", reason, updatedAt: now };
      node.completing = undefined;
      log.warn(`node ${node.row.name} is DOWN: ${reason}`, { node: node.row.name });
      this.jobs.nodeFailed(node.row.name, "stopped responding");
      node.session?.close(4408, "heartbeat timeout");
      node.session = undefined;
    }
  }
}
