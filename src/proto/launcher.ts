/**
 * Launcher (`ebb run`) <-> controller messages, over the /v1/launcher WebSocket (Bearer: the API
 * token or the job's token). It is the API's other door: `ebb run` submits, follows its job and
 * creates its steps on this one connection, without an HTTP round trip.
 */
import { z } from "zod";
import { AdoptCredential, JobId, NodeRef, StepCredential } from "./common.ts";
import { tagged, type MessageOf } from "./tagged.ts";
import { NodeCfg } from "./cfg.ts";
import { JobState, JobSubmit, StepCreate, StepGrant } from "./requests.ts";

/** Numbers a launcher's request so that its answer (step.grant or error) can name it. */
const RequestId = z.int().nonnegative();

export const LauncherToController = tagged({
  /**
   * The first message of every connection: the launcher's release and protocol version
   * (proto/version.ts). Another protocol, or anything before a hello (an ebb run older than the
   * check), is answered by an `error` with code "protocol_version" and the connection is closed.
   */
  "hello": () => ({ version: z.string().max(100), protocol: z.int().nonnegative() }),
  /** Submit an interactive job (POST /v1/jobs's body) and follow it: answered by `submitted`. A job's token submits as that job. */
  "submit": () => ({ job: JobSubmit }),
  /**
   * `elastic`: this launcher runs the job's elastic step and takes its resize orders; `tasks` is
   * that step's world, ranks per node in rank order as of its last commit (what a restarted
   * controller needs to go on resizing it). `known`: the last adaptation whose `realloc` this
   * launcher received (0: none); an open adaptation after it lost its order on the way.
   */
  "attach": () => ({ jobId: JobId, stepId: z.int().nonnegative().optional(), elastic: z.boolean().optional(), tasks: z.array(z.int().positive()).optional(), cred: StepCredential.optional(), known: z.int().nonnegative().optional() }),
  /**
   * Every rank of a resize committed: the new world stands, and a node lost from now is a fault of
   * it (docs/adaptation.md §7.8). Its adapt.done follows (a shrink's once the leaving ranks exited).
   */
  "adapt.commit": () => ({ jobId: JobId, adaptId: z.int() }),
  /** An adaptation ended: committed (ok) or failed, with when each of its steps happened. */
  "adapt.done": () => ({ jobId: JobId, adaptId: z.int(), ok: z.boolean(), message: z.string().optional(), times: z.record(z.string(), z.number()), tasks: z.array(z.int().positive()).optional() }),
  /**
   * The elastic step lost contact with `node` (its agent died or is unreachable): the controller
   * answers with a fault realloc (the survivors go on) or ends the job NODE_FAIL.
   */
  "fault": () => ({ jobId: JobId, node: z.string(), reason: z.string() }),
  /**
   * The elastic step lost an inner node of its launch tree: a credential (use "adopt") that lets the
   * launcher re-attach `nodes`, the lost node's children, as its own. Answered by adopt.grant or an error with the same `req`.
   */
  "adopt": () => ({ jobId: JobId, stepId: z.int().nonnegative(), req: RequestId, nodes: z.array(z.string().min(1)).min(1) }),
  /**
   * A checkpoint-restart adaptation (docs/adaptation.md §12): the old ranks wrote their parts and
   * ended; a step over the adaptation's new world to restart them in. Answered by restart.grant
   * or an error with the same `req`.
   */
  "restart": () => ({ jobId: JobId, adaptId: z.int(), req: RequestId }),
  /** POST /v1/jobs/{id}/steps on this connection: answered by step.grant or an error with the same `req`. */
  "step.create": () => ({ jobId: JobId, req: RequestId, step: StepCreate }),
  /** `interrupted`: ebb run was stopped by this signal (Ctrl-C), the step is CANCELLED. */
  /** The step's CFG, merged over its launch tree (§10.2.3); `elastic`: part of the job's elastic world (merged with its other steps). */
  "cfg": () => ({
    jobId: JobId,
    stepId: z.int().nonnegative(),
    ntasks: z.int().positive(),
    elastic: z.boolean(),
    final: z.boolean(),
    reports: z.int().nonnegative(),
    cfg: NodeCfg,
    monitor: z.string().max(1000).optional(),
  }),
  "step.end": () => ({ jobId: JobId, stepId: z.int().nonnegative(), exitCode: z.int(), message: z.string().optional(), interrupted: z.string().optional() }),
  /**
   * An `ebb run` that created its own allocation gives it back with the step's exit code
   * (`interrupted`: the job is CANCELLED); the step root of an elastic command job on the
   * controller's host reports the job's end with it.
   */
  "release": () => ({ jobId: JobId, exitCode: z.int(), message: z.string().optional(), lostNode: z.string().optional(), interrupted: z.string().optional() }),
});
export type LauncherToController = MessageOf<typeof LauncherToController>;

export const ControllerToLauncher = tagged({
  /** The job a `submit` made; this connection now follows it (job.state comes next). */
  "submitted": () => ({ jobId: JobId }),
  "job.state": () => ({ jobId: JobId, state: JobState, reason: z.string().optional(), nodes: z.array(z.string()) }),
  "step.grant": () => ({ req: RequestId, grant: StepGrant }),
  /**
   * The step.create `req` (an exact step) waits for CPUs the job's other exact steps hold; its
   * step.grant (or an error, when the job ends) follows once they are free. `message` says what it waits for.
   */
  "step.waiting": () => ({ req: RequestId, message: z.string() }),
  "adopt.grant": () => ({ req: RequestId, cred: AdoptCredential }),
  /** The step a checkpoint-restart adaptation restarts its world in: its nodes in rank order, ranks per node, credential. */
  "restart.grant": () => ({ req: RequestId, stepId: z.int().nonnegative(), nodes: z.array(NodeRef), tasks: z.array(z.int().positive()), cred: StepCredential }),
  /** What the HTTP API would answer with a 4xx: `req` names the request it answers, if any. */
  "error": () => ({ message: z.string(), code: z.string().optional(), field: z.string().optional(), req: RequestId.optional() }),
  /**
   * Informative: a resize about to be ordered adds `nodes` to the job, so that the launcher may open
   * its connections to their agents while the order (realloc) is on its way. No credential: the
   * launch on them waits for the realloc's. A launcher may ignore it (an older one drops it unparsed).
   */
  "links": () => ({ jobId: JobId, nodes: z.array(NodeRef) }),
  /**
   * Resize the elastic step (step 1 of docs/adaptation.md §7.1): the new node list in rank order, the nodes
   * added (with a grant for the joining ranks' step) and the nodes that leave. `fault`: the nodes
   * in `removed` failed; their ranks are gone, the survivors open a fault window (no probe rounds).
   */
  "realloc": () => ({
    jobId: JobId,
    adaptId: z.int(),
    nodes: z.array(NodeRef),
    added: z.array(NodeRef),
    removed: z.array(z.string()),
    /** A resize's rank remap, made once by the scheduler's plan (sched/plan.ts); none for a fault. */
    remap: z.object({ staying: z.int().nonnegative(), leaving: z.int().nonnegative(), joining: z.int().nonnegative(), tasks: z.array(z.int().positive()) }).optional(),
    /** When (ms since the epoch) the adaptation must have committed: every wait of the launcher's ends then, failing it. */
    deadline: z.number(),
    join: z.object({ stepId: z.int().nonnegative(), tasks: z.array(z.int().positive()), cred: StepCredential }).optional(),
    fault: z.object({ reason: z.string() }).optional(),
  }),
});
export type ControllerToLauncher = MessageOf<typeof ControllerToLauncher>;

/** The close code after a refused hello (as HTTP's 426 Upgrade Required); the `error` before it says why. */
export const PROTOCOL_REFUSED = 4426;
/** The close code of a launcher over its user's share of connections (as HTTP's 429); the `error` before it says why. */
export const LAUNCHERS_REFUSED = 4429;
/**
 * Bytes sent to a launcher it has not read: past this the controller cuts its connection. A launcher reads
 * what it gets (job states, grants, reallocs: a few KiB); one that does not while it sends made the
 * controller hold ~15 MB per connection (Bun's own cap), and a user may hold hundreds of them.
 */
export const LAUNCHER_UNREAD_MAX = 1 << 20;
