/** What the agent provides for ONE rank's PMI connection. Everything the wire needs, nothing about processes or the tree. */

export interface PmiRankInfo {
  rank: number;
  size: number;
  /** MPMD index (`appnum`); 0 for a plain launch. */
  appnum: number;
  /** PMI-1 `get_my_kvsname`. */
  kvsname: string;
  /** PMI-2 `job-getid`. */
  jobId: string;
  /**
   * `get_universe_size`: the most ranks the job may grow to (an elastic job's maximum). -1: not
   * known — PMI-2's `universeSize` is then not found, and MPICH leaves MPI_UNIVERSE_SIZE unset.
   */
  universeSize: number;
  /** Created by spawn: PMI-2 then reports `spawner-jobid`; the agent also sets `PMI_SPAWNED=1`. */
  spawned: boolean;
  /** PMI-2 `spawner-jobid`; defaults to `jobId`. */
  spawnerJobId?: string;
  /** PMI_PORT `cmd=set debug=` and PMI-2 `debugged`/`pmiverbose`. */
  debug: boolean;
}

export interface SpawnCommand {
  execname: string;
  args: string[];
  maxprocs: number;
  info: Record<string, string>;
}

export interface SpawnRequest {
  commands: SpawnCommand[];
  /** Keys the children find in their KVS before their first fence (MPICH: `PARENT_ROOT_PORT_NAME`). */
  preput: Record<string, string>;
}

export interface SpawnResult {
  /** 0 on success. */
  rc: number;
  /** One code per process started (0 = ok); sent only if it has exactly sum(maxprocs) entries. */
  errcodes?: number[];
  /** PMI-2 `jobid` of the new processes. */
  jobId?: string;
  /** Reason when rc != 0. */
  message?: string;
}

export interface PmiBackend {
  /** Read on every request, so an elastic resize may change size/universeSize between fences. */
  readonly info: PmiRankInfo;
  /** Job attributes: `PMI_process_mapping`, `universeSize`, `PMI_hwloc_xmlfile`, ... undefined if unknown. */
  jobAttr(key: string): string | undefined;
  /** Cached until the next fence. */
  put(key: string, value: string): void;
  /** The merged KVS as of the last fence (plus preput keys for spawned processes). */
  get(key: string): string | undefined;
  /** barrier_in / kvs-fence; resolves at barrier_out. A rejection's message goes back to the rank as the error reply. */
  fence(): Promise<void>;
  nodeAttrPut(key: string, value: string): void;
  /** With `wait`, resolves once some local rank puts the key. */
  nodeAttrGet(key: string, wait: boolean): Promise<string | undefined>;
  /** false: the service is already published. */
  publish(service: string, port: string): Promise<boolean>;
  lookup(service: string): Promise<string | undefined>;
  /** false: no such service. */
  unpublish(service: string): Promise<boolean>;
  spawn(req: SpawnRequest): Promise<SpawnResult>;
  /** The rank asked to abort the job. No reply is sent; the connection is closed afterwards. */
  abort(code: number, message: string): void;
  finalize(): void;
  /** Malformed or oversized input. The message names the rank; the connection is closed right after. */
  protocolError(message: string): void;
  /**
   * ebb's own commands on the same connection (`cmd=ebb-probe ...`). Return undefined for a command
   * you do not know: the rank then gets an "unknown command" error reply. The reply is
   * `cmd=<cmd>_result rc=0 k=v ...` (PMI-1) or `cmd=<cmd>-response;rc=0;k=v;...` (PMI-2).
   */
  extension?(cmd: string, args: Record<string, string>): Promise<Record<string, string>> | undefined;
  /** The transport closed; `finalized` tells a clean finalize from a rank that vanished. Not called after abort or protocolError. */
  disconnected?(finalized: boolean): void;
}
