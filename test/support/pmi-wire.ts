import type { PmiBackend, PmiRankInfo, SpawnRequest, SpawnResult } from "../../src/pmi/backend.ts";
import { PmiConnection, type PmiConnectionOptions } from "../../src/pmi/connection.ts";

/** A PmiConnection with an in-memory transport: `send` what a client writes, `take` what came back. */
export class Wire {
  readonly conn: PmiConnection;
  private written: string[] = [];
  closedByServer = false;

  constructor(opts: PmiConnectionOptions) {
    this.conn = new PmiConnection(
      {
        write: (d) => void this.written.push(d),
        close: () => void (this.closedByServer = true),
      },
      opts,
    );
  }

  send(data: string | Uint8Array): this {
    this.conn.feed(data);
    return this;
  }

  /** Everything written since the last take. */
  take(): string {
    const s = this.written.join("");
    this.written = [];
    return s;
  }

  /** Let pending promise callbacks (async backend calls) run. */
  async settle(): Promise<void> {
    for (let i = 0; i < 10; i++) await Promise.resolve();
    await Bun.sleep(0);
  }

  /** send, settle, take. */
  async ask(data: string): Promise<string> {
    this.send(data);
    await this.settle();
    return this.take();
  }
}

export interface FakeCalls {
  puts: Array<[string, string]>;
  nodeAttrs: Array<[string, string]>;
  spawns: SpawnRequest[];
  aborts: Array<[number, string]>;
  finalized: number;
  protocolErrors: string[];
  extensions: Array<[string, Record<string, string>]>;
  disconnects: boolean[];
}

/** A backend with fixed answers that records what it was asked. */
export function fakeBackend(
  over: Partial<PmiRankInfo> = {},
  answers: {
    kvs?: Record<string, string>;
    attrs?: Record<string, string>;
    nodeAttrs?: Record<string, string>;
    fence?: () => Promise<void>;
    spawn?: (req: SpawnRequest) => Promise<SpawnResult>;
    names?: Map<string, string>;
    extension?: PmiBackend["extension"];
  } = {},
): PmiBackend & { calls: FakeCalls } {
  const info: PmiRankInfo = {
    rank: 3,
    size: 8,
    appnum: 0,
    kvsname: "kvs_42_0",
    jobId: "42.0",
    universeSize: 16,
    spawned: false,
    debug: false,
    ...over,
  };
  const calls: FakeCalls = { puts: [], nodeAttrs: [], spawns: [], aborts: [], finalized: 0, protocolErrors: [], extensions: [], disconnects: [] };
  const kvs = new Map(Object.entries(answers.kvs ?? {}));
  const nodeAttrs = new Map(Object.entries(answers.nodeAttrs ?? {}));
  const names = answers.names ?? new Map<string, string>();
  return {
    info,
    calls,
    jobAttr: (key) => answers.attrs?.[key],
    put: (key, value) => void calls.puts.push([key, value]),
    get: (key) => kvs.get(key),
    fence: answers.fence ?? (() => Promise.resolve()),
    nodeAttrPut: (key, value) => {
      calls.nodeAttrs.push([key, value]);
      nodeAttrs.set(key, value);
    },
    nodeAttrGet: async (key) => nodeAttrs.get(key),
    publish: async (s, p) => !names.has(s) && (names.set(s, p), true),
    lookup: async (s) => names.get(s),
    unpublish: async (s) => names.delete(s),
    spawn: async (req) => {
      calls.spawns.push(req);
      return answers.spawn ? answers.spawn(req) : { rc: 0, jobId: "42.1" };
    },
    abort: (code, message) => void calls.aborts.push([code, message]),
    finalize: () => void calls.finalized++,
    protocolError: (m) => void calls.protocolErrors.push(m),
    extension: answers.extension
      ? (cmd, args) => {
          calls.extensions.push([cmd, args]);
          return answers.extension?.(cmd, args);
        }
      : undefined,
    disconnected: (f) => void calls.disconnects.push(f),
  };
}

/** A PMI-2 frame the way MPICH writes it (`%6u` length). */
export const frame = (payload: string): string => String(Buffer.byteLength(payload)).padStart(6, " ") + payload;

export const V1_INIT = "cmd=init pmi_version=1 pmi_subversion=1\n";
export const V2_INIT = "cmd=init pmi_version=2 pmi_subversion=0\n";
