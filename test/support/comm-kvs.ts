/**
 * Test-only stand-in for the PMI KVS: a key-value store with named fences, served over a Unix
 * socket by the test process, and the client (a comm Bootstrap) the spawned rank programs use.
 * Protocol: one JSON object per line each way, requests carry an id the reply echoes.
 */
import type { Socket } from "bun";
import type { Bootstrap } from "../../src/comm/index.ts";

interface Request {
  id: number;
  op: "put" | "get" | "fence";
  key?: string;
  value?: string;
  /** fence: a name for this fence and how many callers release it. */
  name?: string;
  count?: number;
}

interface Conn {
  buf: string;
}

export class KvsServer {
  private readonly store = new Map<string, string>();
  private readonly fences = new Map<string, { count: number; waiting: { s: Socket<Conn>; id: number }[] }>();
  private readonly listener;

  constructor(readonly path: string) {
    this.listener = Bun.listen<Conn>({
      unix: path,
      socket: {
        open: (s) => {
          s.data = { buf: "" };
        },
        data: (s, chunk) => {
          s.data.buf += chunk.toString();
          let nl: number;
          while ((nl = s.data.buf.indexOf("\n")) >= 0) {
            const line = s.data.buf.slice(0, nl);
            s.data.buf = s.data.buf.slice(nl + 1);
            this.handle(s, JSON.parse(line) as Request);
          }
        },
      },
      data: { buf: "" },
    });
  }

  private handle(s: Socket<Conn>, r: Request): void {
    const reply = (x: object) => s.write(`${JSON.stringify({ id: r.id, ...x })}\n`);
    switch (r.op) {
      case "put":
        this.store.set(r.key!, r.value!);
        return void reply({});
      case "get":
        return void reply({ value: this.store.get(r.key!) ?? null });
      case "fence": {
        const name = r.name!;
        let f = this.fences.get(name);
        if (!f) this.fences.set(name, (f = { count: r.count!, waiting: [] }));
        f.waiting.push({ s, id: r.id });
        if (f.waiting.length === f.count) {
          for (const w of f.waiting) w.s.write(`${JSON.stringify({ id: w.id })}\n`);
          this.fences.delete(name);
        }
        return;
      }
    }
  }

  get(key: string): string | undefined {
    return this.store.get(key);
  }

  stop(): void {
    this.listener.stop(true);
  }
}

export class KvsClient {
  private next = 1;
  private buf = "";
  private readonly waiting = new Map<number, (v: { value?: string | null }) => void>();
  private socket!: Socket<undefined>;

  static async connect(path: string): Promise<KvsClient> {
    const c = new KvsClient();
    c.socket = await Bun.connect({
      unix: path,
      socket: {
        data: (_s, chunk) => {
          c.buf += chunk.toString();
          let nl: number;
          while ((nl = c.buf.indexOf("\n")) >= 0) {
            const msg = JSON.parse(c.buf.slice(0, nl)) as { id: number; value?: string | null };
            c.buf = c.buf.slice(nl + 1);
            c.waiting.get(msg.id)?.(msg);
            c.waiting.delete(msg.id);
          }
        },
      },
    });
    c.socket.unref();
    return c;
  }

  private call(r: Omit<Request, "id">): Promise<{ value?: string | null }> {
    const id = this.next++;
    // A pending call must keep the process alive; the socket itself is unref'd.
    const keep = setTimeout(() => {}, 1 << 30);
    return new Promise((resolve) => {
      this.waiting.set(id, (v) => {
        clearTimeout(keep);
        resolve(v);
      });
      this.socket.write(`${JSON.stringify({ ...r, id })}\n`);
    });
  }

  async put(key: string, value: string): Promise<void> {
    await this.call({ op: "put", key, value });
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.call({ op: "get", key })).value ?? undefined;
  }

  /** Waits until `count` callers reached the fence called `name`. */
  async fence(name: string, count: number): Promise<void> {
    await this.call({ op: "fence", name, count });
  }

  close(): void {
    this.socket.end();
  }
}

/** The Bootstrap a spawned test rank uses, from the launcher's environment. */
export async function testBootstrap(): Promise<Bootstrap & { kvs: KvsClient }> {
  const env = process.env;
  const kvs = await KvsClient.connect(env.EBB_TEST_KVS!);
  let fences = 0;
  const size = Number(env.EBB_TEST_SIZE);
  return {
    rank: Number(env.EBB_TEST_RANK),
    size,
    node: env.EBB_TEST_NODE ?? "node0",
    kvs,
    put: (k, v) => kvs.put(k, v),
    get: (k) => kvs.get(k),
    fence: () => kvs.fence(`boot.${fences++}`, size),
  };
}
