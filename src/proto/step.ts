/**
 * Messages of the step tree overlay (launcher -> agents -> agents). Every message names its step
 * ("JOB.STEP"); one connection may carry many steps. Down messages are broadcast to the whole
 * subtree; "launched" and "fence.in" are reduced on the way up; the rest are forwarded as they are.
 */
import { z } from "zod";
import { AdoptCredential, NodeRef, Signal, StepCredential, StepKey, StringRecord } from "./common.ts";
import { tagged, type MessageOf } from "./tagged.ts";
import { NodeCfg } from "./cfg.ts";

/** The most standard input one `stdin` message carries, and so what a node holds per reading rank per piece in flight. */
export const STDIN_CHUNK = 64 << 10;
/**
 * The most output (characters of `io.data`) a node may have sent up its edge and its parent not
 * yet acknowledged (`io.ack`); a parent acknowledges OUTPUT_ACK_EVERY at a time. docs/output.md.
 */
export const OUTPUT_WINDOW = 1 << 20;
export const OUTPUT_ACK_EVERY = OUTPUT_WINDOW / 4;
/** The most `stdin` pieces a launcher may have unacknowledged by a node: 4 × 64 KiB per reading rank is what an agent may hold for it. */
export const STDIN_WINDOW = 4;
const STDIN_CHUNK_BASE64 = Math.ceil(STDIN_CHUNK / 3) * 4;

export const PmiMode = z.enum(["both", "pmi1", "pmi2", "none"]);
export type PmiMode = z.infer<typeof PmiMode>;

export const Kvs = StringRecord;

export const SpawnRequest = z.object({
  commands: z.array(z.object({ execname: z.string().min(1), args: z.array(z.string()), maxprocs: z.int().positive(), info: z.record(z.string(), z.string()) })).min(1),
  preput: Kvs,
});
export type SpawnRequest = z.infer<typeof SpawnRequest>;

/** One program of an MPMD launch (PMI spawn_multiple): `count` consecutive ranks run `argv`. */
export const App = z.object({ argv: z.array(z.string()).min(1), count: z.int().positive() });

export const StepSpec = z.lazy(() =>
  z.object({
    jobId: z.int().positive(),
    stepId: z.int().nonnegative(),
    argv: z.array(z.string()).min(1),
    /** Several programs (appnum 0, 1, ...) instead of one argv for all ranks. */
    apps: z.array(App).optional(),
    env: StringRecord,
    cwd: z.string().min(1),
    /** The step's nodes; a node's index here is its EBB_NODEID. */
    nodes: z.array(NodeRef).min(1),
    /** Ranks per node, in node order; ranks are numbered contiguously in that order, unless `distribution` says otherwise. */
    tasks: z.array(z.int().nonnegative()),
    /**
     * How the ranks are numbered over the nodes (srun -m; sched/layout.ts ranksByNode): cyclic, one
     * to each node in turn; plane, `size` to each node in turn. Absent: block. Not for elastic steps.
     */
    distribution: z.union([z.object({ kind: z.literal("cyclic") }), z.object({ kind: z.literal("plane"), size: z.int().positive() })]).optional(),
    /** The job's whole allocation (EBB_JOB_NODELIST). */
    jobNodes: z.array(z.string()),
    fanout: z.int().min(1).max(1024),
    pmi: PmiMode,
    /** Ranks reach the PMI server over TCP (PMI_PORT + PMI_ID) instead of an inherited socketpair (PMI_FD). */
    pmiPort: z.boolean().optional(),
    /** Values every rank's environment gets (controller URL, job token, ...). */
    jobEnv: StringRecord,
    /** Set for processes created by PMI spawn: the keys the parent pre-put into the children's KVS. */
    spawn: z.object({ preput: StringRecord, parent: StepKey }).optional(),
    /**
     * The ranks on `node` write stdout and stderr straight to `path`, opened for appending, instead
     * of sending them up the tree: a command job's output file, on the node that writes it anyway.
     */
    outputFile: z.object({ node: z.string().min(1), path: z.string().min(1), error: z.string().min(1).optional() }).optional(),
    /**
     * Which of the step's ranks read the launcher's standard input (`ebb run --input`, srun's -i):
     * every rank, or the one with this step rank. Absent: none, every rank reads /dev/null.
     */
    stdin: z.union([z.literal("all"), z.int().nonnegative()]).optional(),
    /**
     * Slurm's --ntasks-per-gpu (gpu-bind=single:N): each rank is shown one of the job's GPUs on its
     * node, the node's local ranks N to a GPU in turn. Absent: every rank sees all of them.
     */
    tasksPerGpu: z.int().positive().optional(),
    /**
     * An exact step's own cores (srun --exact; StepGrant.cores), per node of `nodes`: the node's
     * core indices its ranks are bound to, among the job's there. Absent: the job's cores.
     */
    cores: z.array(z.array(z.int().nonnegative()).max(4096)).optional(),
    /** The step's own name (`ebb run -J` inside a job, srun's -J): its ranks' SLURM_JOB_NAME. */
    name: z.string().min(1).max(200).optional(),
    /**
     * How this node's ranks are bound to the job's cores here (srun's --cpu-bind): "cores" (the
     * default), each local rank to its own slice of them; "none", every rank to all of them.
     */
    cpuBind: z.enum(["none", "cores"]).optional(),
    /**
     * Universe size reported to PMI clients (MPI_UNIVERSE_SIZE): what an elastic job may grow to,
     * its maximum nodes' slots. Absent for rigid jobs, which no resize can grow: the attribute is
     * then unset, as under Hydra when nothing tells it the slots.
     */
    universeSize: z.int().positive().optional(),
    /** Keys every rank finds in its KVS before the first fence. */
    preput: Kvs.optional(),
    /** CFG monitoring of the ranks' communication calls (default on; `ebb run --cfg=off`). */
    cfg: z.enum(["on", "off"]).optional(),
    /** Seconds between the ranks' monitoring samples and the agents' CFG reports (default 60). */
    sampleInterval: z.number().positive().optional(),
    /** An elastic step: its ranks can adapt (ebb/comm's initAdapt and friends). */
    elastic: z
      .object({
        status: z.enum(["new", "joining"]),
        /** World generation the ranks start in (joining ranks: the world they join). */
        generation: z.int().nonnegative(),
        /** World rank of the step's first rank. */
        rankBase: z.int().nonnegative(),
        /** Ranks in that world (EBB_NTASKS, PMI_SIZE). */
        worldSize: z.int().positive(),
        /** The world's nodes (EBB_NODELIST), when it spans several steps. */
        worldNodes: z.array(z.string()).optional(),
        /** Seconds between timing samples. */
        sampleInterval: z.number().positive(),
        /** Joining ranks: the adaptation they join. */
        window: z.object({ adaptId: z.int() }).optional(),
      })
      .optional(),
  }),
);
export type StepSpec = z.infer<typeof StepSpec>;

export const StepDown = tagged({
  "launch": () => ({ step: StepKey, cred: StepCredential, spec: StepSpec }),
  "signal": () => ({ step: StepKey, signal: Signal }),
  /** Re-attach: this connection becomes the step's upstream on the receiving node (its parent was lost); `cred` has use "adopt". */
  "adopt": () => ({ step: StepKey, cred: AdoptCredential }),
  /** The merged KVS of fence `seq`, sent to every node once all ranks have entered it. */
  // more: a piece of the fence's puts, the rest follow (protocol 13, pmi/kvs-pieces.ts).
  "fence.out": () => ({ step: StepKey, seq: z.int().nonnegative(), kvs: Kvs, error: z.string().optional(), more: z.literal(true).optional() }),
  /**
   * The next piece of the launcher's standard input (base64, at most STDIN_CHUNK bytes), or its end
   * (`eof`), for the ranks StepSpec.stdin names; sent only once the whole step has launched, each
   * acknowledged by every node that holds such a rank (`stdin.ack`). See docs/stdin.md.
   */
  "stdin": () => ({ step: StepKey, seq: z.int().nonnegative(), data: z.base64().max(STDIN_CHUNK_BASE64), eof: z.boolean().optional() }),
  /**
   * The parent has passed on `chars` more characters (UTF-16 units of `io.data`) of this edge's
   * output (the launcher: written them): the child may send as many more (its window, docs/output.md).
   */
  "io.ack": () => ({ step: StepKey, chars: z.int().positive() }),
  /** Every rank has been accounted for: nodes forget the step. */
  "end": () => ({ step: StepKey }),
  /** Adaptation, step 4 (docs/adaptation.md §7.3): report the highest probe count of your ranks. */
  "adapt.count": () => ({ step: StepKey, adaptId: z.int(), round: z.int() }),
  /** Every rank enters the window at probe call `target`; report ranks already past it. */
  "adapt.target": () => ({ step: StepKey, adaptId: z.int(), round: z.int(), target: z.int().positive() }),
  /** A rank ran past the target: let the waiting ones go on; a later target follows. */
  "adapt.release": () => ({ step: StepKey, adaptId: z.int(), round: z.int() }),
  /** Every rank waits at the target: enter the window. Carries the joining ranks' cards. */
  "adapt.go": () => ({
    step: StepKey,
    adaptId: z.int(),
    generation: z.int().nonnegative(),
    staying: z.int().nonnegative(),
    leaving: z.int().nonnegative(),
    joining: z.int().nonnegative(),
    oldSize: z.int().positive(),
    cards: Kvs,
    /** A fault window: these old-world ranks are dead; the survivors are renumbered in order. */
    lost: z.array(z.int().nonnegative()).optional(),
  }),
  /** Every rank committed: the new world is the world. */
  "adapt.done": () => ({ step: StepKey, adaptId: z.int(), generation: z.int().nonnegative(), size: z.int().positive() }),
  /** The answer to a rank's spawn request, for the node that asked. */
  "spawn.result": () => ({
    step: StepKey,
    node: z.string(),
    reqId: z.int(),
    rc: z.int(),
    errcodes: z.array(z.int()).optional(),
    jobId: z.string().optional(),
    message: z.string().optional(),
  }),
});
export type StepDown = MessageOf<typeof StepDown>;

/**
 * Sent first on a step connection whose first message (a launch or an adopt) is longer than a frame
 * (frames.ts FRAME_MAX): that message's credential alone, which authenticates the connection, so
 * that the message may follow in pieces (protocol 10). Never delivered to a step.
 */
export const StepAuth = tagged({ auth: () => ({ cred: z.union([StepCredential, AdoptCredential]) }) });
export type StepAuth = MessageOf<typeof StepAuth>;

export const StepUp = tagged({
  /** `count` nodes of the sender's subtree have started their ranks. */
  "launched": () => ({ step: StepKey, count: z.int().nonnegative() }),
  /** The answer to `adopt`: `node` took this connection as its upstream; what it held while orphaned follows. */
  "adopted": () => ({ step: StepKey, node: z.string() }),
  /** A rank's output; it counts against the sender's window until its parent's `io.ack` (docs/output.md). */
  "io": () => ({ step: StepKey, rank: z.int().nonnegative(), fd: z.union([z.literal(1), z.literal(2)]), data: z.string() }),
  /** `oom`: the kernel killed the rank for its job's memory limit (its cgroup counted an OOM kill). */
  "exit": () => ({ step: StepKey, rank: z.int().nonnegative(), node: z.string(), code: z.int(), signal: z.string().optional(), oom: z.boolean().optional() }),
  /** `node`'s ranks that read the standard input have taken piece `seq` (or are gone): the launcher may send more. */
  "stdin.ack": () => ({ step: StepKey, node: z.string(), seq: z.int().nonnegative() }),
  /** Reductions of the adaptation protocol (max, or, sum over the subtree). */
  "adapt.counted": () => ({ step: StepKey, adaptId: z.int(), round: z.int(), max: z.int().nonnegative() }),
  "adapt.checked": () => ({ step: StepKey, adaptId: z.int(), round: z.int(), racer: z.boolean() }),
  "adapt.arrived": () => ({ step: StepKey, adaptId: z.int(), round: z.int(), count: z.int().nonnegative() }),
  "adapt.committed": () => ({ step: StepKey, adaptId: z.int(), count: z.int().nonnegative() }),
  /** A rank asks for new processes on new nodes (PMI spawn); answered by spawn.result. */
  "spawn": () => ({ step: StepKey, node: z.string(), rank: z.int().nonnegative(), reqId: z.int(), request: SpawnRequest }),
  /**
   * The subtree's CFG (dissertation §10.2.3): each agent merges its own node's reduced CFG with its
   * children's and sends it up, at most once per sampling interval and at once when the whole
   * subtree is final; `reports` is the fewest reports any node of the subtree has made.
   */
  "cfg": () => ({ step: StepKey, cfg: NodeCfg, final: z.boolean(), monitor: z.string().max(1000).optional(), reports: z.int().nonnegative() }),
  /** `count` ranks of the subtree entered fence `seq`, with the puts they made since the last fence. */
  // error: the subtree's merged puts passed a per-step cap (kvs is then empty); the fence fails everywhere.
  // more: a piece of the subtree's puts (count 0), the rest follow; the last piece has the count (protocol 13, pmi/kvs-pieces.ts).
  "fence.in": () => ({ step: StepKey, seq: z.int().nonnegative(), count: z.int().nonnegative(), kvs: Kvs, error: z.string().optional(), more: z.literal(true).optional() }),
  /**
   * Something went wrong on `node` (a failed launch, a lost child, a PMI protocol error, an abort;
   * `ranks-lost`: a rank of an elastic step was killed while its agent lives, the node's ranks are lost;
   * `adopt`: an adoption was refused).
   */
  "error": () => ({
    step: StepKey,
    node: z.string(),
    rank: z.int().nonnegative().optional(),
    kind: z.enum(["launch", "lost-node", "ranks-lost", "pmi", "abort", "adopt"]),
    message: z.string(),
    code: z.int().optional(),
  }),
});
export type StepUp = MessageOf<typeof StepUp>;
