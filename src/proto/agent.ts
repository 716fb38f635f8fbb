/** Agent <-> controller messages, over the agent's WebSocket to /v1/agent (Bearer: cluster key). */
import { HOST_STATES } from "../domain/host-state.ts";
import { z } from "zod";
import { JobId, NodeRef, Signal, StepCredential, StringRecord } from "./common.ts";
import { tagged, type MessageOf } from "./tagged.ts";
import { fastAgentToController, fastControllerToAgent } from "./agent-fast.ts";
import { JOB_SIGNALS } from "../domain/job-options.ts";

/** A job's share of one node (domain/resources.ts NodeShare without the node's name). */
export const Share = z.object({
  cores: z.array(z.int().nonnegative()).max(65536),
  memMiB: z.int().nonnegative(),
  gpus: z.array(z.int().nonnegative()).max(1024),
});
export type Share = z.infer<typeof Share>;


/** What the first node of a batch or command job needs to run it. */
export const JobStart = z.object({
  id: JobId,
  kind: z.enum(["batch", "command"]),
  name: z.string(),
  argv: z.array(z.string()).optional(),
  script: z.string().optional(),
  /** A batch script's arguments, its $1 $2 ... */
  args: z.array(z.string()).optional(),
  env: StringRecord,
  cwd: z.string(),
  output: z.string(),
  /** Where stderr goes, when not with stdout. */
  error: z.string().optional(),
  nodes: z.array(NodeRef).min(1),
  tasks: z.array(z.int().nonnegative()),
  jobEnv: StringRecord,
  /** Step 0's credential, for command jobs. */
  cred: StepCredential.optional(),
  /** Whom the job runs as (agents running as root), the user who submitted it. */
  user: z.string().optional(),
  /**
   * Which run of the job this is: 0, and one more each time --requeue put it back in the queue.
   * Its job.exit says it, so that the end of a run killed for a requeue does not end the next.
   */
  run: z.int().nonnegative().optional(),
  /** sbatch --open-mode=append: the output and error files are appended to, not truncated. */
  append: z.boolean().optional(),
  /** Elastic command jobs: step 0 is resizable (downAfterMs as StepGrant's). */
  elastic: z.object({ minNodes: z.int(), maxNodes: z.int(), sampleInterval: z.number(), downAfterMs: z.int().positive().optional() }).optional(),
  /** Seconds between the ranks' monitoring samples (every job, elastic or not). */
  sampleInterval: z.number().positive().optional(),
});
export type JobStart = z.infer<typeof JobStart>;

/** What a job used on a node (job.usage; job.exit's `usage`). */
const usageFields = () => ({ cpuSec: z.number().nonnegative(), peakMemMiB: z.number().nonnegative(), oomKills: z.int().nonnegative() });

/** Each kind's fields (exported for the test that holds agent-fast.ts to them). */
export const agentToControllerShapes = {
  "hello": () => ({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "node names are letters, digits, '.', '_', '-'"),
    cpus: z.int().positive(),
    memoryMb: z.int().nonnegative(),
    addr: z.string().min(1),
    version: z.string().max(100),
    /** proto/version.ts's PROTOCOL_VERSION; absent (an agent older than the check) counts as 0. A mismatch is refused. */
    protocol: z.int().nonnegative().optional(),
    /** Jobs that still have processes on this node (to re-attach after a controller restart). */
    jobs: z.array(JobId),
    /** The agent's clock (ms since the epoch) when it sent this: credentials expire, so clocks must agree. */
    time: z.number().optional(),
    /** `addr` was given (--advertise), not the agent's own listening address: the controller checks it. */
    advertised: z.boolean().optional(),
    /** Whom jobs run as here: "job-user" (the agent is root), else the agent's own user name. */
    runAs: z.string().optional(),
    /** GPUs by index, each with its type or null (detected or `--gres`); absent: none. */
    gpus: z.array(z.string().max(32).nullable()).max(1024).optional(),
    /** Node features (`--features`), for jobs' `--constraint`. */
    features: z.array(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/)).max(64).optional(),
  }),
  "heartbeat": () => ({ jobs: z.array(JobId) }),
  /**
   * The node's host state as its rules judge it (domain/host-state.ts): sent when it changes, and
   * once after each hello. The controller keeps the latest; none yet counts as free.
   */
  "host.state": () => ({
    state: z.enum(HOST_STATES),
    rule: z.string().max(200),
    inputs: z.record(z.string().regex(/^[a-z][a-z0-9_.]{0,63}$/), z.number()).refine((r) => Object.keys(r).length <= 32, "at most 32 inputs"),
    since: z.number().nonnegative(),
  }),
  /**
   * The job's batch script or command step ended on this (its first) node. Resent (on reconnect)
   * until a job.ack, or a job.kill of the job, says the controller has it. `usage`: a command
   * job's job.usage from this node (without OOM kills), carried by its exit rather than sent alone.
   * `gone`: the job has no process left on this node. The controller then sends this node no
   * job.kill for the end this exit makes: the node's next `shares`, without the job, says the
   * controller has the exit (else a job.ack does), and the agent kills what of the job started
   * here since, as that kill would have.
   */
  "job.exit": () => ({ jobId: JobId, exitCode: z.int(), message: z.string().optional(), lostNode: z.string().optional(), run: z.int().nonnegative().optional(), usage: z.object(usageFields()).optional(), gone: z.boolean().optional() }),
  /** After a job.kill with `confirm`: the job has no processes left on this node. */
  "job.cleaned": () => ({ jobId: JobId }),
  /** Timing samples of an elastic job's local ranks since the last report (node-local sums). */
  /** `stateBytes`: what the node's checkpoint-restart ranks registered (libebb), their sum as of now. */
  "perf": () => ({ jobId: JobId, ranks: z.int().positive(), iterations: z.int().nonnegative(), loopNs: z.number().nonnegative(), commNs: z.number().nonnegative(), stateBytes: z.number().nonnegative().optional() }),
  /** An EPOP program's structure (JSON, once) or progress (program counter, iteration, bound). */
  "program": () => ({ jobId: JobId, structure: z.string().max(65536).optional(), pc: z.int().nonnegative().optional(), iteration: z.int().nonnegative().optional(), bound: z.int().nonnegative().optional() }),
  /**
   * What a job used on this node, read from its cgroup each time its processes here are all gone
   * (a batch job's before its job.exit; a killed job's before its job.cleaned; again after a later
   * step's, the totals so far): CPU seconds, peak memory, and how many processes the kernel's OOM
   * killer ended (> 0: the job went over its memory). Re-sent after a reconnect unless it went
   * out after the job had left the node's shares; the latest per node counts. Not sent where the
   * node has no cgroups.
   */
  "job.usage": () => ({ jobId: JobId, ...usageFields() }),
  /** PMI name service (publish/lookup/unpublish), shared by the steps of one job. */
  "names": () => ({ reqId: z.int(), jobId: JobId, op: z.enum(["publish", "lookup", "unpublish"]), service: z.string().min(1).max(256), port: z.string().max(1024).optional() }),
};
export const AgentToController = tagged(agentToControllerShapes, fastAgentToController);
export type AgentToController = MessageOf<typeof AgentToController>;

/** Each kind's fields (exported for the test that holds agent-fast.ts to them). */
export const controllerToAgentShapes = {
  "welcome": () => ({ heartbeatMs: z.int().positive(), kill: z.array(JobId) }),
  "job.start": () => ({ job: JobStart }),
  /**
   * Signal every process of the job on this node; KILL also forgets the job. Acknowledges a job.exit
   * of it too. `confirm`: the controller holds the node (COMPLETING) until a job.cleaned says the
   * job has no process left here; without it, no job.cleaned is sent.
   */
  "job.kill": () => ({ jobId: JobId, signal: Signal, reason: z.string().optional(), confirm: z.boolean().optional() }),
  "job.ack": () => ({ jobId: JobId }),
  /**
   * sbatch --signal, its time come: `signal` to the job's batch shell alone (`batchOnly`: sent to
   * the first node only), or to every process of the job's steps on this node (not the batch shell).
   */
  "job.signal": () => ({ jobId: JobId, signal: z.enum(JOB_SIGNALS), batchOnly: z.boolean() }),
  /**
   * The job this node is allocated to now (null: none). Step credentials are honoured only for it:
   * a job's end (or the node leaving it) revokes its credentials here.
   */
  "alloc": () => ({ jobId: JobId.nullable(), user: z.string().nullable().optional() }),
  /**
   * Every job this node is allocated to now, with its share (replaces `alloc` when nodes are shared).
   * Step credentials are honoured only for these jobs; the agent confines each job to its share.
   */
  "shares": () => ({ jobs: z.array(z.object({ jobId: JobId, user: z.string().nullable(), share: Share })).max(4096) }),
  "names.result": () => ({ reqId: z.int(), ok: z.boolean(), port: z.string().optional(), error: z.string().max(500).optional() }),
};
export const ControllerToAgent = tagged(controllerToAgentShapes, fastControllerToAgent);
export type ControllerToAgent = MessageOf<typeof ControllerToAgent>;

/**
 * WebSocket close codes by which the controller refuses an agent for good: the agent prints the
 * reason and exits (retrying could not help). Other closes are retried.
 */
export const REFUSED = {
  /** Not the cluster key. */
  badKey: 4401,
  /** A message that does not validate, or anything before hello. */
  badMessage: 4400,
  /** The node name is in use by a live agent. */
  nameTaken: 4409,
  /** Registration refused: another protocol version, the clocks disagree, or the advertised address cannot be reached. */
  refused: 4403,
} as const;
export const isRefusal = (code: number) => (Object.values(REFUSED) as number[]).includes(code);
/** How far an agent's clock may be from the controller's. */
export const MAX_CLOCK_SKEW_MS = 60_000;

/**
 * The longest an agent waits between attempts to reach its controller. A controller that starts
 * gives the nodes it knows this long, on top of their three heartbeats, to come back.
 */
export const AGENT_RECONNECT_MAX_MS = 2000;
