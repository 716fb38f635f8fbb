/**
 * The controller daemon: SQLite job store, HTTP API, agent and launcher WebSockets, scheduler.
 *
 *   clients --HTTP--> api/ --> Jobs --(SQLite first)--> state --> AgentHub --WS--> agents
 *                                 ^                                   |
 *          SchedulerLoop: makePlan (sched/) -> PlanApplier       heartbeats, job exits
 */
import { join } from "node:path";
import { chmodSync, writeFileSync } from "node:fs";
import { createApi } from "../../api/app.ts";
import type { ApiBackend } from "../../api/backend.ts";
import type { JobView } from "../../api/schemas.ts";
import { isAdmin, scopeMayActOn, sightOf, type PrivateDataKind, type Scope } from "../../domain/scope.ts";
import { publicView } from "../../api/private.ts";
import { randomBytes } from "node:crypto";
import { findUserToken, insertUserToken } from "../../store/tokens.ts";
import { AGENT_RECONNECT_MAX_MS } from "../../proto/agent.ts";
import { safeEqual, verifyJobToken } from "../../proto/credential.ts";
import { checkpointEvery, guardWrites, onAutocommit, openDb, openedExclusive } from "../../store/db.ts";
import { JobStore } from "../../store/jobs.ts";
import { listNodes } from "../../store/nodes.ts";
import type { ServerTls } from "../../util/tls.ts";
import { formatHostPort, type HostPort } from "../../util/addr.ts";
import { logger } from "../../util/log.ts";
import { VERSION } from "../../util/version.ts";
import { AgentHub } from "./agents.ts";
import { PortServer } from "../../proto/port-link.ts";
import { Jobs } from "./jobs.ts";
import { ensureSecret } from "./keys.ts";
import { lockStateDir } from "./lock.ts";
import { LauncherHub } from "./launchers.ts";
import { SchedulerLoop } from "./scheduler.ts";
import { SpawnQueue } from "./spawns.ts";
import { DEFAULT_ADAPT_TIMEOUT_MS, Elastic } from "./elastic.ts";
import { POLICY_TABLE } from "../../sched/policies/index.ts";
import { PlanApplier } from "./plan-apply.ts";
import { Snapshots } from "./snapshot.ts";
import { PlanStore } from "../../store/plans.ts";
import { planView } from "./plan-views.ts";
import { DEFAULT_LIMITS, resolveConfig, type AdminLimits, type ErsConfig } from "../../sched/config.ts";
import { ElasticStore } from "../../store/elastic.ts";
import { CfgStore } from "../../store/cfg.ts";
import { ClusterState } from "./state.ts";
import { Ledger } from "./ledger.ts";
import { launcherSlots, serve } from "./server.ts";
import { byNodeName, jobDetail, jobViews, nodeView } from "./views.ts";
import { Eligibility } from "./eligibility.ts";
import { DEFAULT_KEEP_HISTORY_MS, purgeHistory } from "./history.ts";
import { testOnly } from "./test-only.ts";
import { ExpectedStarts } from "./starts.ts";
import { nextTurn, pageByPage } from "./turns.ts";
import { usageByUser } from "../../store/usage.ts";
import { DEFAULT_MAX_JOB_COUNT } from "../../sched/quota.ts";
import { DEFAULT_ARRAY_TASKS } from "../../domain/array.ts";
import { currentUser } from "../../util/user.ts";
import { ControllerMetrics } from "./metrics.ts";
import { timeline } from "./timeline.ts";
import { TimelineFeed } from "./timeline-feed.ts";
import { StoreHealth } from "./storage.ts";
import { dumpLedgerMemory } from "./memory.ts";
import { stepRootCa, StepRoots } from "./step-roots.ts";
import { QueuePolicy } from "./queue.ts";
import { partitionViews } from "./partition-views.ts";
import { Partitions, type PartitionConfig, type UserLimits } from "../../sched/partitions.ts";
import { resolvePriority, type PriorityConfig } from "../../sched/priority.ts";
import { DEFAULT_CLUSTER_NAME } from "../slurm-env.ts";

/** User tokens start with this, so the cluster and job tokens never cost a database lookup. */
const USER_TOKEN_PREFIX = "ebbu_";
const log = logger("controller");

export interface ControllerOptions {
  listen: HostPort;
  stateDir: string;
  dbPath?: string;
  heartbeatMs?: number;
  defaultTimeLimit?: number;
  killWaitMs?: number;
  orphanGraceMs?: number;
  /** Seconds between timing samples of elastic jobs' ranks (default 60). */
  sampleInterval?: number;
  /** Elastic scheduling: policy, thresholds, interval, settle time... (defaults: sched/config.ts). */
  scheduler?: Partial<ErsConfig>;
  /** Bounds for jobs' own scheduler settings. */
  limits?: AdminLimits;
  /** How long an adaptation may take before it fails (default 600 s): docs/adaptation.md §9. */
  adaptTimeoutMs?: number;
  /** How long past an adaptation's deadline its launcher's report is waited for before the controller fails it (default 10 s). */
  adaptReportGraceMs?: number;
  /** The most tasks one job array may have (default 1001, Slurm's MaxArraySize; at most 10,000). */
  maxArrayTasks?: number;
  /** The most jobs pending or running, an array's tasks each (default 50,000, Slurm's MaxJobCount); one user at most half. */
  maxJobCount?: number;
  /** SLURM_CLUSTER_NAME of every job (default "ebb"). */
  clusterName?: string;
  /** MiB of memory per core for jobs that ask for none (Slurm's DefMemPerCPU); default: each node's memory / cores. */
  defMemPerCpu?: number;
  /** Queue order: multifactor priority with fair share (default), or submit order; weights, half-life, shares. */
  priority?: PriorityConfig;
  /** Named sets of nodes with their own limits (none: one pool of nodes). */
  partitions?: PartitionConfig[];
  /** Each user's limits on the whole cluster (running jobs, cores, GPUs, nodes, jobs submitted). */
  userLimits?: UserLimits;
  /** Finished jobs are purged this long after they ended (default 30 days; Infinity keeps them). */
  keepHistoryMs?: number;
  /** Called each time a node registers (ebb up waits for its hosts so). */
  onNodeUp?(name: string): void;
  /** A token that may read /metrics besides the API token. */
  metricsToken?: string;
  /** /metrics needs no token. */
  metricsOpen?: boolean;
  /** What other users may not see (Slurm's PrivateData): "jobs", "nodes", "usage"; default none (a job's private part is always private). */
  privateData?: readonly PrivateDataKind[];
  /** A user's own resize rescales its time limit as the scheduler's do (default: it never raises it). */
  userResizeScalesLimit?: boolean;
  /** Serve HTTPS/WSS only, with this certificate and key (PEM); agents' step ports must present a certificate `ca` (the cluster CA, PEM) signed. */
  tls?: ServerTls & { ca: string };
}

export interface ControllerHandle {
  url: string;
  token: string;
  clusterKey: string;
  stateDir: string;
  /**
   * A MessageChannel whose other port goes to agents in this process (`ebb up`'s): their links
   * to this controller, carrying what /v1/agent carries (proto/port-link.ts). The cluster key is
   * not asked: only this process holds the port.
   */
  linkAgents(): MessagePort;
  /**
   * The whole cluster is stopping with this controller (`ebb up`): agents that go from now on are
   * not judged DOWN (their jobs are reconciled at the next start, as after any controller stop),
   * however long the agents take to stop.
   */
  stopJudgingNodes(): void;
  stop(): Promise<void>;
}

export async function startController(opts: ControllerOptions): Promise<ControllerHandle> {
  const token = ensureSecret(opts.stateDir, "token");
  const clusterKey = ensureSecret(opts.stateDir, "cluster.key");
  const release = lockStateDir(opts.stateDir, formatHostPort(opts.listen));
  try {
    return await startLocked(opts, token, clusterKey, release);
  } catch (e) {
    release();
    throw e;
  }
}

async function startLocked(opts: ControllerOptions, token: string, clusterKey: string, release: () => void): Promise<ControllerHandle> {
  const heartbeatMs = opts.heartbeatMs ?? 2000;
  const dbPath = opts.dbPath ?? join(opts.stateDir, "ebb.db");
  const db = openDb(dbPath);
  if (openedExclusive(db)) log.warn(`opened ${dbPath} in exclusive locking mode (its disk is full): no other process can read it until the controller restarts`);
  // Whether the database takes writes now: refused while it does not (a full or read-only disk).
  const health = new StoreHealth(db, dbPath);
  guardWrites(db, health);
  health.check();
  const store = new JobStore(db);
  const stopCheckpoints = checkpointEvery(db, 1000);
  const estore = new ElasticStore(db);
  const sampleInterval = opts.sampleInterval ?? 60;
  const state = new ClusterState();
  const metrics = new ControllerMetrics({ state, version: VERSION, mtct: (j) => elastic!.mtct(j.row.id, j.row.sampleInterval ?? sampleInterval).mtct, store: health });
  metrics.process.start();
  let commits = 0;
  store.onCommit = (ms) => {
    commits++;
    metrics.commit.observe(ms / 1000);
  };
  // Single writes outside a transaction commit alone: timed too (not counted in `commits`, the
  // timeline's change mark, which heartbeats' writes would move every second).
  onAutocommit(db, (ms) => metrics.commit.observe(ms / 1000));
  // Agents retry their link with backoff: those of a restarted controller's nodes may be waiting.
  const back = Date.now() + AGENT_RECONNECT_MAX_MS;
  for (const row of listNodes(db)) state.nodes.set(row.name, ClusterState.node(row, back));

  let scheduler: SchedulerLoop | undefined;
  let agents: AgentHub | undefined;
  let elastic: Elastic | undefined;
  // Made below (it reads the views); jobs restored before it end unseen by any stream.
  let feed: TimelineFeed | undefined;
  // Elastic command jobs' step roots run on this host (step-roots.ts), once the server's URL is known.
  const rootCa = stepRootCa(opts.stateDir, opts.tls !== undefined);
  if (!rootCa) log.warn(`no cluster CA at ${join(opts.stateDir, "ca.pem")}: the step roots of elastic command jobs run in their first node's agent, so losing that node fails them`);
  let stepRoots: StepRoots | undefined;
  const eligibility = new Eligibility(state, store);
  const spawns = new SpawnQueue(state, () => scheduler!.request());
  // Nodes just given to a job: their agents hear of it now (a launch there waits for that news).
  const allocated = (nodes: readonly string[]) => agents!.syncAllocations(nodes);
  // The one writer of jobs' rows and allocations, in SQLite and in memory.
  const ledger = new Ledger(store, state);
  // Partitions, limits and the queue's order (fair share charges what jobs hold to their users).
  const priority = opts.priority ?? resolvePriority();
  const queue = new QueuePolicy({ priority, partitions: new Partitions(opts.partitions), userLimits: opts.userLimits ?? {} }, state);
  const jobs = new Jobs(
    store,
    state,
    {
      clusterKey,
      defaultTimeLimit: opts.defaultTimeLimit ?? 3600,
      killWaitMs: opts.killWaitMs ?? 5000,
      nodeDownMs: 3 * heartbeatMs + Math.ceil(heartbeatMs / 8),
      orphanGraceMs: opts.orphanGraceMs ?? Math.max(10_000, 5 * heartbeatMs),
      sampleInterval,
      maxArrayTasks: opts.maxArrayTasks ?? DEFAULT_ARRAY_TASKS,
      maxJobCount: opts.maxJobCount ?? DEFAULT_MAX_JOB_COUNT,
      clusterName: opts.clusterName ?? DEFAULT_CLUSTER_NAME,
      defMemPerCpu: opts.defMemPerCpu,
      queue,
    },
    {
      toAgent: (node, msg) => agents!.send(node, msg),
      schedule: () => scheduler!.request(),
      ended: (job) => {
        queue.ended(job, Date.now());
        elastic!.jobEnded(job);
        metrics.jobEnded(job);
        feed?.ended(job);
      },
      started: () => metrics.jobStarted(),
      allocated,
      submitted: (ms) => metrics.submit.observe(ms / 1000),
      watch: (list, at) => eligibility.watch(list, at),
      requestNodes: (jobId, tasks, waitMs, grant) => spawns.request(jobId, tasks, waitMs, grant),
      startStepRoot: rootCa ? (start) => (stepRoots ? stepRoots.start(start) : "the controller is still starting") : undefined,
    },
    ledger,
  );
  eligibility.cancelInvalid = (id, reason) => jobs.cancel(id, { task: true, reason });
  const ersConfig = resolveConfig(opts.scheduler);
  const policy = POLICY_TABLE[ersConfig.policy];
  // One loop: a snapshot, one plan (sched/plan.ts), one applier that re-checks and carries it out.
  const snapshots = new Snapshots(state, () => elastic!, spawns, ersConfig, { ...DEFAULT_LIMITS, ...opts.limits }, sampleInterval, opts.defMemPerCpu, queue);
  const planStore = new PlanStore(db);
  // A job's CFG state is saved at each report: the newest waits while the store takes no writes.
  const cfgStore = new CfgStore(db);
  const cfgRows = { all: () => cfgStore.all(), save: (jobId: number, data: unknown) => health.orLater(`cfg:${jobId}`, () => cfgStore.save(jobId, data)) };
  const applier = new PlanApplier(state, store, planStore, jobs, () => elastic!, spawns, snapshots);
  scheduler = new SchedulerLoop(state, snapshots, applier, {
    // A plan cannot be committed while the store takes no writes; one that failed half-way leaves
    // items accepted but not carried out, which are abandoned as at a restart.
    mayPass: () => health.writable,
    unavailable: () => health.orLater("plans", () => applier.reconcile()),
    gather: () => (agents!.recordReports(), jobs.acceptQueued()),
    beforePass: (t) => eligibility.refresh(t),
    passTook: (ms) => metrics.pass.observe(ms / 1000),
  });
  elastic = new Elastic(store, estore, state, jobs, ledger, clusterKey, opts.adaptTimeoutMs ?? DEFAULT_ADAPT_TIMEOUT_MS, { schedule: () => scheduler!.request(), adapted: (a) => metrics.adapted(a), allocated }, cfgRows, opts.adaptReportGraceMs);
  agents = new AgentHub(db, state, jobs, heartbeatMs, () => scheduler!.request(), elastic, health, opts.tls?.ca, opts.onNodeUp);
  const launchers = new LauncherHub(state, jobs, elastic, (scope) => submitter(scope), health);
  health.orLater("plans", () => applier.reconcile());
  jobs.restore();
  elastic.restore();
  queue.restore(store, Date.now());
  const views = { store, plans: planStore, state, elastic, sampleInterval };
  feed = new TimelineFeed(views, () => commits);

  // The API token is its owner's, the user running the controller (who alone can read it); a job's
  // token acts for the user of its job. Per-user tokens would map to their users here.
  const owner = currentUser();
  const submitter = (scope: Scope) => (scope === "all" ? { user: owner } : typeof scope === "object" ? { user: scope.user } : { user: state.jobs.get(scope)?.row.user ?? store.getJob(scope)?.user ?? owner, job: scope });
  const privateData = new Set(opts.privateData ?? []);
  const starts = new ExpectedStarts(scheduler);
  // Who asked for a resize, in its reason.
  const requester = (scope: Scope) => (scope === "all" ? "the cluster's token" : typeof scope === "object" ? `${scope.admin ? "admin" : "user"} ${scope.user}` : `job ${scope}'s token`);
  // Whose jobs a listing holds: every job, unless jobs are private (then a user's, or a job token's own and submitted ones).
  const reader = (scope: Scope) =>
    privateData.has("jobs") ? { visibleTo: typeof scope === "number" ? scope : undefined, owner: typeof scope === "object" && !isAdmin(scope) ? scope.user : undefined } : {};
  const backend: ApiBackend = {
    version: VERSION,
    clusterName: opts.clusterName ?? DEFAULT_CLUSTER_NAME,
    privateData,
    submit: (req, scope) => jobs.submitSoon(req, submitter(scope)),
    testOnly: (req, scope) => testOnly(jobs, scheduler!, req, submitter(scope), queue),
    listJobs: (f, scope) => {
      const filter = { ...f, ...reader(scope) };
      // A view carries its job's user and submitter: whose it is needs no lookup.
      const shown = (v: JobView) => (sightOf(scope, v.id, v, privateData) === "all" ? v : publicView(v));
      return { pages: pageByPage(store.jobPages(filter), (rows) => jobViews(views, rows).map(shown)), next: store.nextBefore(filter) };
    },
    userOf: (scope) => submitter(scope).user,
    usage: async ({ since, until, user }) => {
      const now = Date.now();
      const end = Math.max(since, Math.min(until, now));
      const steps = usageByUser(db.$client, since, end, now, { user });
      let r = steps.next();
      for (; !r.done; r = steps.next()) await nextTurn();
      const users = r.value;
      const total = { jobs: 0, nodeSeconds: 0, coreSeconds: 0, gpuSeconds: 0 };
      for (const u of users) (total.jobs += u.jobs), (total.nodeSeconds += u.nodeSeconds), (total.coreSeconds += u.coreSeconds), (total.gpuSeconds += u.gpuSeconds);
      return { since: new Date(since).toISOString(), until: new Date(end).toISOString(), users, total };
    },
    starts: async (scope) => {
      const all = await starts.get();
      return privateData.has("jobs") ? { ...all, jobs: all.jobs.filter((j) => sightOf(scope, j.id, jobs.row(j.id), privateData) !== "none") } : all;
    },
    listPlans: (q, scope) => {
      if (q.jobId !== undefined && !state.jobs.has(q.jobId) && !store.hasJob(q.jobId)) return undefined;
      return planStore.list({ ...reader(scope), ...q }).map(({ plan, items }) => planView(plan, items, (id) => sightOf(scope, id, jobs.row(id), privateData) !== "none"));
    },
    getJob: async (id, waitMs) => {
      if (waitMs) await jobs.whenEnded(id, waitMs);
      const row = store.getJob(id);
      return row ? jobDetail(views, row) : undefined;
    },
    arrayTask: (arrayJobId, task) => store.arrayTaskId(arrayJobId, task),
    resize: (id, nodes, scope) => applier.resizeNow(id, nodes, { by: requester(scope), keepLimit: !isAdmin(scope) && opts.userResizeScalesLimit !== true }),
    cancel: (id, task) => jobs.cancel(id, { task }),
    signal: (id, req, task) => jobs.signal(id, req.signal, req.to, { task }),
    hold: (id, task) => jobs.setHeld(id, true, { task }),
    release: (id, task) => jobs.setHeld(id, false, { task }),
    requeue: (id, task) => jobs.requeueByUser(id, { task }),
    update: (id, req, scope) => jobs.update(id, req, isAdmin(scope)),
    complete: (id, exitCode) => jobs.complete(id, exitCode),
    createStep: (id, req) => jobs.createStep(id, req),
    listNodes: () => [...state.nodes.values()].map((n) => nodeView(n)).sort((a, b) => byNodeName(a.name, b.name)),
    drain: (name, reason, owner) => agents!.setDrain(name, reason, owner),
    listPartitions: () => partitionViews(queue.partitions.list, state),
    priorities: (jobId) => ({ settings: prioritySettings(priority), jobs: queue.priorities(Date.now(), jobId) }),
    shares: () => ({ settings: prioritySettings(priority), users: queue.shares(Date.now()).map(({ factor, ...r }) => ({ ...r, fairShare: factor })) }),
    counts: () => ({ nodes: state.nodes.size, jobs: state.jobs.size }),
    storage: () => {
      const d = health.degraded;
      return d ? { writable: false, reason: d.reason, since: new Date(d.since).toISOString(), deferred: health.deferred } : { writable: true };
    },
    authorize: (t) => {
      if (safeEqual(t, token)) return "all";
      // A job's token stands for a job the controller knows: one of no job (purged from the
      // history) has no user to act for, and would otherwise submit as the controller's.
      const job = verifyJobToken(clusterKey, t);
      if (job !== undefined) return state.jobs.has(job) || store.hasJob(job) ? job : undefined;
      const u = t.startsWith(USER_TOKEN_PREFIX) ? findUserToken(db, t) : undefined;
      return u ? { user: u.user, admin: u.admin } : undefined;
    },
    createToken: (user, admin) => {
      const t = USER_TOKEN_PREFIX + randomBytes(32).toString("base64url");
      insertUserToken(db, t, user, admin);
      log.info(`token issued for user ${user}${admin ? " (admin)" : ""}`);
      return t;
    },
    mayActOn: (scope, id) => scopeMayActOn(scope, id, jobs.row(id)),
    sight: (scope, id) => sightOf(scope, id, jobs.row(id), privateData),
    mayScrape: (t) => opts.metricsOpen === true || (t !== undefined && (safeEqual(t, token) || (opts.metricsToken !== undefined && safeEqual(t, opts.metricsToken)))),
    metrics: () => metrics.render(),
    timeline: (windowSec) => timeline(views, windowSec * 1000),
    watchTimeline: (windowSec, send) => feed!.subscribe(windowSec, send),
  };

  const server = serve({
    listen: opts.listen,
    tls: opts.tls && { cert: opts.tls.cert, key: opts.tls.key },
    api: createApi(backend),
    authorizeAgent: (t) => safeEqual(t, clusterKey),
    authorizeLauncher: backend.authorize,
    userOf: backend.userOf,
    launcherSlots: launcherSlots(),
    agents,
    launchers,
  });
  log.info(`queue order: ${priority.type === "multifactor" ? `multifactor priority (fair share ${priority.weights.fairshare}, age ${priority.weights.age}, job size ${priority.weights.jobSize}; half-life ${priority.halfLife} s)` : "submit order"}${queue.partitions.configured ? `; partitions ${queue.partitions.list.map((p) => (p.isDefault ? `${p.name}*` : p.name)).join(", ")}` : ""}`);
  log.info(`scheduling policy ${ersConfig.policy}`, !policy.resizes ? undefined : { interval: ersConfig.interval, upper: ersConfig.upper, lower: ersConfig.lower, settle: ersConfig.settle, payoff: ersConfig.payoff });
  const url = `${opts.tls ? "https" : "http"}://${formatHostPort({ host: opts.listen.host === "0.0.0.0" ? "127.0.0.1" : opts.listen.host, port: server.port! })}`;
  stepRoots = rootCa && new StepRoots({ url, ...rootCa, fanout: 8, exited: (id, code, signal) => jobs.rootExited(id, code, signal) });
  try {
    writeFileSync(join(opts.stateDir, "controller.url"), `${url}\n`, { mode: 0o600 });
    chmodSync(join(opts.stateDir, "controller.url"), 0o600);
  } catch (e) {
    // A full or read-only state dir: the controller serves what it can; clients are told its URL.
    log.warn(`could not write ${join(opts.stateDir, "controller.url")} (${(e as Error).message}): clients need --controller ${url} (or EBB_CONTROLLER)`);
  }

  // Heartbeats are checked more often than the other housekeeping (AgentHub.checkEveryMs).
  const heartbeatTicker = setInterval(() => (agents!.checkHeartbeats(), agents!.syncAllocations()), agents.checkEveryMs);
  const ticker = setInterval(() => {
    // Not while the store takes no writes: a job that outlives its limit meanwhile ends after.
    health.quietly(() => (jobs.enforceTimeLimits(), elastic!.enforceAdaptTimeouts()));
    scheduler!.request({ full: true });
  }, Math.min(1000, heartbeatMs));
  const purger = purgeHistory(store, opts.keepHistoryMs ?? DEFAULT_KEEP_HISTORY_MS, health.quietly.bind(health));

  // SIGUSR2: what the ledger holds, to STATE_DIR/memory.json (memory.ts).
  const memoryFile = join(opts.stateDir, "memory.json");
  const dumpMemory = () => {
    try {
      dumpLedgerMemory(state, memoryFile);
      log.info(`the ledger's memory is in ${memoryFile}`, { jobs: state.jobs.size });
    } catch (e) {
      log.warn(`could not write ${memoryFile}: ${(e as Error).message}`);
    }
  };
  process.on("SIGUSR2", dumpMemory);

  log.info(`listening on ${url}`, { db: dbPath, stateDir: opts.stateDir });
  if (!opts.tls && !["127.0.0.1", "::1", "localhost"].includes(opts.listen.host))
    log.warn(`serving plain HTTP on ${formatHostPort(opts.listen)}: tokens, the cluster key and step credentials cross the network unencrypted; use TLS (ebb up --tls, or --tls-cert/--tls-key)`);
  const portServers: PortServer[] = [];
  return {
    url,
    token,
    clusterKey,
    stateDir: opts.stateDir,
    linkAgents() {
      const { port1, port2 } = new MessageChannel();
      portServers.push(new PortServer(port1, { message: (s, text) => agents!.onMessage(s, text), close: (s) => agents!.onClose(s) }));
      return port2;
    },
    stopJudgingNodes() {
      agents!.stopJudging();
    },
    async stop() {
      for (const p of portServers) p.close();
      clearInterval(ticker);
      clearInterval(heartbeatTicker);
      metrics.process.stop();
      process.off("SIGUSR2", dumpMemory);
      health.stop();
      feed!.stop();
      if (purger) clearInterval(purger);
      server.stop(true);
      // What this turn read and has not recorded yet is recorded before the store closes.
      health.quietly(() => (agents?.recordReports(), jobs.acceptQueued()));
      stopCheckpoints();
      db.$client.close();
      release();
    },
  };
}

/** How priorities are made, as the API shows it. */
function prioritySettings(p: PriorityConfig) {
  return { type: p.type, weights: { ...p.weights }, maxAge: p.maxAge, halfLife: p.halfLife, favorSmall: p.favorSmall, tresWeights: { ...p.tresWeights } };
}
