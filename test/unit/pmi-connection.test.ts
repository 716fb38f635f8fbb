import { describe, expect, test } from "bun:test";
import { NodeStepPmi } from "../../src/pmi/node-step.ts";
import type { PmiRankInfo } from "../../src/pmi/backend.ts";
import { V1_INIT, V2_INIT, Wire, fakeBackend, frame } from "../support/pmi-wire.ts";

/** Exact reply strings, key order as Hydra 4.0 (pmip_pmi_v1.c, pmiserv_pmi_v1.c, pmip_pmi_v2.c, pmiserv_pmi_v2.c). */

async function v1(b = fakeBackend()) {
  const w = new Wire({ backend: b });
  expect(await w.ask(V1_INIT)).toBe("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
  return w;
}

async function v2(b = fakeBackend()) {
  const w = new Wire({ backend: b });
  expect(await w.ask(V2_INIT)).toBe("cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n");
  expect(await w.ask(frame("cmd=fullinit;pmirank=3;"))).toBe(
    frame("cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=3;size=8;appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;"),
  );
  return w;
}

describe("PMI-1 replies", () => {
  test("info queries", async () => {
    const w = await v1();
    expect(await w.ask("cmd=get_maxes\n")).toBe("cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n");
    expect(await w.ask("cmd=get_appnum\n")).toBe("cmd=appnum appnum=0\n");
    expect(await w.ask("cmd=get_my_kvsname\n")).toBe("cmd=my_kvsname kvsname=kvs_42_0\n");
    expect(await w.ask("cmd=get_universe_size\n")).toBe("cmd=universe_size size=16\n");
    expect(w.conn.version).toBe(1);
  });

  test("put, get, reserved keys", async () => {
    const b = fakeBackend({}, { kvs: { "P1-businesscard": "tag#0$addr#AB12$" }, attrs: { PMI_process_mapping: "(vector,(0,2,4))" } });
    const w = await v1(b);
    expect(await w.ask("cmd=put kvsname=kvs_42_0 key=P3-businesscard value=2F6465762F\n")).toBe("cmd=put_result rc=0 msg=success\n");
    expect(await w.ask("cmd=put kvsname=kvs_42_0 key=empty value=\n")).toBe("cmd=put_result rc=0 msg=success\n");
    expect(b.calls.puts).toEqual([
      ["P3-businesscard", "2F6465762F"],
      ["empty", ""],
    ]);
    expect(await w.ask("cmd=get kvsname=kvs_42_0 key=P1-businesscard\n")).toBe("cmd=get_result rc=0 msg=success value=tag#0$addr#AB12$\n");
    expect(await w.ask("cmd=get kvsname=kvs_42_0 key=P9-businesscard\n")).toBe(
      "cmd=get_result rc=-1 msg=key_P9-businesscard_not_found value=unknown\n",
    );
    expect(await w.ask("cmd=get kvsname=kvs_42_0 key=PMI_process_mapping\n")).toBe("cmd=get_result rc=0 msg=success value=(vector,(0,2,4))\n");
    expect(await w.ask("cmd=get kvsname=kvs_42_0 key=PMI_hwloc_xmlfile\n")).toBe("cmd=get_result rc=0 msg=success value=\n");
    expect(await w.ask("cmd=put kvsname=kvs_42_0 key=PMI_process_mapping value=x\n")).toBe(
      "cmd=put_result rc=-1 msg=keys_with_the_PMI__prefix_are_reserved\n",
    );
    expect(await w.ask(`cmd=put kvsname=kvs_42_0 key=${"k".repeat(65)} value=x\n`)).toBe("cmd=put_result rc=-1 msg=key_longer_than_64_characters\n");
    expect(await w.ask("cmd=put kvsname=kvs_42_0 value=x\n")).toBe("cmd=put_result rc=-1 msg=missing_key\n");
    expect(b.calls.puts).toHaveLength(2);
  });

  test("values with spaces and backslashes travel escaped", async () => {
    const b = fakeBackend({}, { kvs: { k: "a b\\c" } });
    const w = await v1(b);
    expect(await w.ask("cmd=put key=s value=x\\ y\\\\z\n")).toBe("cmd=put_result rc=0 msg=success\n");
    expect(b.calls.puts).toEqual([["s", "x y\\z"]]);
    expect(await w.ask("cmd=get key=k\n")).toBe("cmd=get_result rc=0 msg=success value=a\\ b\\\\c\n");
  });

  test("a value too long for one line becomes an error reply, not a broken line", async () => {
    const w = await v1(fakeBackend({}, { kvs: { big: "v".repeat(1100) } }));
    const reply = await w.ask("cmd=get key=big\n");
    expect(reply).toBe("cmd=get_result rc=-1 msg=reply_longer_than_1024_bytes\n");
  });

  test("barrier_in is answered only when the fence resolves", async () => {
    let release: () => void = () => {};
    const w = await v1(fakeBackend({}, { fence: () => new Promise<void>((r) => (release = r)) }));
    expect(await w.ask("cmd=barrier_in\n")).toBe("");
    release();
    await w.settle();
    expect(w.take()).toBe("cmd=barrier_out\n");
  });

  test("a failed fence answers with rc and msg", async () => {
    const w = await v1(fakeBackend({}, { fence: () => Promise.reject(new Error("exchange failed: node 7 down")) }));
    expect(await w.ask("cmd=barrier_in\n")).toBe("cmd=barrier_out rc=-1 msg=exchange_failed:_node_7_down\n");
  });

  test("name service", async () => {
    const w = await v1();
    expect(await w.ask("cmd=publish_name service=ocean port=tag#0$x$\n")).toBe("cmd=publish_result info=ok rc=0 msg=success\n");
    expect(await w.ask("cmd=publish_name service=ocean port=y\n")).toBe("cmd=publish_result info=fail rc=1 msg=key_already_present\n");
    expect(await w.ask("cmd=lookup_name service=ocean\n")).toBe("cmd=lookup_result port=tag#0$x$ info=ok rc=0 msg=success\n");
    expect(await w.ask("cmd=unpublish_name service=ocean\n")).toBe("cmd=unpublish_result info=ok rc=0 msg=success\n");
    expect(await w.ask("cmd=unpublish_name service=ocean\n")).toBe("cmd=unpublish_result info=fail rc=1 msg=service_not_found\n");
    expect(await w.ask("cmd=lookup_name service=ocean\n")).toBe("cmd=lookup_result info=fail rc=1 msg=service_not_found\n");
  });

  test("finalize, then abort closes without a reply", async () => {
    const b = fakeBackend();
    const w = await v1(b);
    expect(await w.ask("cmd=finalize\n")).toBe("cmd=finalize_ack\n");
    expect(b.calls.finalized).toBe(1);
    expect(await w.ask("cmd=abort exitcode=7 message=out of memory\n")).toBe("");
    expect(b.calls.aborts).toEqual([[7, "out of memory"]]);
    expect(w.closedByServer).toBe(true);
    expect(w.conn.isOpen).toBe(false);
  });

  test("unknown commands and ebb extensions", async () => {
    const b = fakeBackend(
      {},
      {
        extension: (cmd, args) =>
          cmd === "ebb-probe" ? Promise.resolve({ status: "pending", iteration: args.iteration ?? "?" }) : undefined,
      },
    );
    const w = await v1(b);
    expect(await w.ask("cmd=frobnicate\n")).toBe("cmd=frobnicate_result rc=-1 msg=unknown_command_frobnicate\n");
    expect(await w.ask("cmd=ebb-probe iteration=12\n")).toBe("cmd=ebb-probe_result rc=0 status=pending iteration=12\n");
    expect(await w.ask("cmd=create_kvs\n")).toBe("cmd=create_kvs_result rc=-1 msg=unknown_command_create_kvs\n");
    expect(b.calls.extensions).toEqual([
      ["frobnicate", {}],
      ["ebb-probe", { iteration: "12" }],
      ["create_kvs", {}],
    ]);
  });

  test("commands before init, and versions we do not speak", async () => {
    const w = new Wire({ backend: fakeBackend() });
    expect(await w.ask("cmd=get_maxes\n")).toBe("cmd=maxes rc=-1 msg=init_required\n");
    expect(await w.ask("cmd=init pmi_version=3 pmi_subversion=0\n")).toBe(
      "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1 msg=unsupported_PMI_version_3.0\n",
    );
    // A client of the version the step does not serve: the refusal, then the user is told what to do.
    const b2 = fakeBackend();
    const only2 = new Wire({ backend: b2, mode: "pmi2" });
    expect(await only2.ask(V1_INIT)).toBe("cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=-1 msg=unsupported_PMI_version_1.1\n");
    expect(b2.calls.protocolErrors).toEqual(["PMI protocol error from rank 3: this MPI speaks PMI-1; use --mpi pmi1 or both"]);
    expect(only2.closedByServer).toBe(true);
    const b1 = fakeBackend();
    const only1 = new Wire({ backend: b1, mode: "pmi1" });
    expect(await only1.ask(V2_INIT)).toBe("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1 msg=unsupported_PMI_version_2.0\n");
    expect(b1.calls.protocolErrors).toEqual(["PMI protocol error from rank 3: this MPI speaks PMI-2; use --mpi pmi2 or both"]);
  });

  test("several requests in one chunk, and one request split over many chunks", async () => {
    const w = await v1();
    expect(await w.ask("cmd=get_appnum\ncmd=get_universe_size\n")).toBe("cmd=appnum appnum=0\ncmd=universe_size size=16\n");
    for (const ch of "cmd=get_my_kvsname\n") w.send(ch);
    expect(w.take()).toBe("cmd=my_kvsname kvsname=kvs_42_0\n");
  });

  test("a request sent while a fence is pending waits for the barrier_out (lock-step)", async () => {
    let release: () => void = () => {};
    const w = await v1(fakeBackend({}, { fence: () => new Promise<void>((r) => (release = r)) }));
    expect(await w.ask("cmd=barrier_in\ncmd=get_appnum\n")).toBe("");
    release();
    await w.settle();
    expect(w.take()).toBe("cmd=barrier_out\ncmd=appnum appnum=0\n");
  });
});

describe("PMI_PORT handshake", () => {
  test("initack binds the rank and answers with Hydra's four lines", async () => {
    const backends = [fakeBackend({ rank: 0, size: 2 }), fakeBackend({ rank: 1, size: 2, debug: true })];
    const w = new Wire({ byId: (id) => backends[id] });
    expect(await w.ask("cmd=initack pmiid=1\n")).toBe("cmd=initack\ncmd=set size=2\ncmd=set rank=1\ncmd=set debug=1\n");
    expect(await w.ask(V1_INIT)).toBe("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    expect(w.conn.rank).toBe(1);
  });

  test("an unknown pmiid gets an error reply and the connection is closed", async () => {
    const errors: string[] = [];
    const w = new Wire({ byId: () => undefined, onError: (m) => errors.push(m) });
    expect(await w.ask("cmd=initack pmiid=9\n")).toBe("cmd=initack rc=-1 msg=no_rank_with_pmiid_9\n");
    expect(errors).toEqual(["PMI protocol error from an unidentified PMI connection: no rank with pmiid 9"]);
    expect(w.closedByServer).toBe(true);
  });

  test("init without initack on a PMI_PORT connection", async () => {
    const errors: string[] = [];
    const w = new Wire({ byId: () => undefined, onError: (m) => errors.push(m) });
    expect(await w.ask(V1_INIT)).toBe("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1 msg=send_initack_first\n");
    expect(errors).toHaveLength(1);
  });

  test("PMI-2 binds at fullinit through pmirank (MPICH) or srcid (Slurm's libpmi2 with PMI_ID)", async () => {
    for (const key of ["pmirank", "srcid"]) {
      const w = new Wire({ byId: (id) => (id === 5 ? fakeBackend({ rank: 5 }) : undefined) });
      await w.ask(V2_INIT);
      expect(await w.ask(frame(`cmd=fullinit;${key}=5;threaded=FALSE;`))).toBe(
        frame("cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=5;size=8;appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;"),
      );
      expect(w.conn.rank).toBe(5);
    }
  });
});

describe("PMI-2 replies", () => {
  test("job and KVS", async () => {
    const b = fakeBackend({}, { kvs: { "P1-bc": "x;y" }, attrs: { PMI_process_mapping: "(vector,(0,2,4))" } });
    const w = await v2(b);
    expect(w.conn.version).toBe(2);
    expect(await w.ask(frame("cmd=job-getid;thrid=0x7ffd1c;"))).toBe(frame("cmd=job-getid-response;thrid=0x7ffd1c;jobid=42.0;rc=0;"));
    expect(await w.ask(frame("cmd=kvs-put;key=P3-bc;value=a;;b;"))).toBe(frame("cmd=kvs-put-response;rc=0;"));
    expect(b.calls.puts).toEqual([["P3-bc", "a;b"]]);
    expect(await w.ask(frame("cmd=kvs-fence;"))).toBe(frame("cmd=kvs-fence-response;rc=0;"));
    expect(await w.ask(frame("cmd=kvs-get;jobid=42.0;srcid=1;key=P1-bc;"))).toBe(frame("cmd=kvs-get-response;found=TRUE;value=x;;y;rc=0;"));
    expect(await w.ask(frame("cmd=kvs-get;jobid=42.0;srcid=-1;key=nope;"))).toBe(frame("cmd=kvs-get-response;found=FALSE;rc=0;"));
    expect(await w.ask(frame("cmd=kvs-put;key=PMI_x;value=1;"))).toBe(
      frame("cmd=kvs-put-response;rc=-1;errmsg=keys with the PMI_ prefix are reserved;"),
    );
  });

  test("job and node attributes", async () => {
    const b = fakeBackend({}, { attrs: { PMI_process_mapping: "(vector,(0,2,4))" } });
    const w = await v2(b);
    expect(await w.ask(frame("cmd=info-getjobattr;key=PMI_process_mapping;"))).toBe(
      frame("cmd=info-getjobattr-response;found=TRUE;value=(vector,(0,2,4));rc=0;"),
    );
    expect(await w.ask(frame("cmd=info-getjobattr;key=universeSize;"))).toBe(frame("cmd=info-getjobattr-response;found=TRUE;value=16;rc=0;"));
    // A job that cannot grow has no universe size: not found (PMI-2), -1 (PMI-1); MPICH leaves the attribute unset.
    const rigid = await v2(fakeBackend({ universeSize: -1 }));
    expect(await rigid.ask(frame("cmd=info-getjobattr;key=universeSize;"))).toBe(frame("cmd=info-getjobattr-response;found=FALSE;rc=0;"));
    expect(await (await v1(fakeBackend({ universeSize: -1 }))).ask("cmd=get_universe_size\n")).toBe("cmd=universe_size size=-1\n");
    expect(await w.ask(frame("cmd=info-getjobattr;key=PMI_hwloc_xmlfile;"))).toBe(frame("cmd=info-getjobattr-response;found=FALSE;rc=0;"));
    expect(await w.ask(frame("cmd=info-putnodeattr;key=shm;value=seg0;"))).toBe(frame("cmd=info-putnodeattr-response;rc=0;"));
    expect(await w.ask(frame("cmd=info-getnodeattr;key=shm;wait=FALSE;"))).toBe(frame("cmd=info-getnodeattr-response;found=TRUE;value=seg0;rc=0;"));
    expect(await w.ask(frame("cmd=info-getnodeattr;key=other;wait=FALSE;"))).toBe(frame("cmd=info-getnodeattr-response;found=FALSE;rc=0;"));
    expect(await w.ask(frame("cmd=info-getnodeattr;key=other;wait=maybe;"))).toBe(
      frame("cmd=info-getnodeattr-response;rc=-1;errmsg=wait must be TRUE or FALSE, got maybe;"),
    );
  });

  test("name service", async () => {
    const w = await v2();
    expect(await w.ask(frame("cmd=name-publish;name=ocean;port=tag#0$x$;infokeycount=0;"))).toBe(frame("cmd=name-publish-response;rc=0;"));
    expect(await w.ask(frame("cmd=name-publish;name=ocean;port=y;infokeycount=0;"))).toBe(
      frame("cmd=name-publish-response;rc=1;errmsg=duplicate_service_ocean;"),
    );
    expect(await w.ask(frame("cmd=name-lookup;name=ocean;infokeycount=0;"))).toBe(
      frame("cmd=name-lookup-response;port=tag#0$x$;value=tag#0$x$;found=TRUE;rc=0;"),
    );
    expect(await w.ask(frame("cmd=name-unpublish;name=ocean;infokeycount=0;"))).toBe(frame("cmd=name-unpublish-response;rc=0;"));
    expect(await w.ask(frame("cmd=name-unpublish;name=ocean;infokeycount=0;"))).toBe(
      frame("cmd=name-unpublish-response;rc=1;errmsg=service_ocean_not_found;"),
    );
    expect(await w.ask(frame("cmd=name-lookup;name=ocean;infokeycount=0;"))).toBe(frame("cmd=name-lookup-response;found=FALSE;rc=1;"));
  });

  test("spawn", async () => {
    const b = fakeBackend({}, { spawn: async () => ({ rc: 0, jobId: "42.1", errcodes: [0, 0] }) });
    const w = await v2(b);
    const req =
      "cmd=spawn;thrid=0x1;ncmds=1;preputcount=1;ppkey0=PARENT_ROOT_PORT_NAME;ppval0=tag#0$p$;" +
      "subcmd=./worker;maxprocs=2;argc=2;argv0=-n;argv1=a b;infokeycount=1;infokey0=wdir;infoval0=/tmp;";
    expect(await w.ask(frame(req))).toBe(frame("cmd=spawn-response;thrid=0x1;rc=0;jobid=42.1;nerrs=0;errcodes=0,0;"));
    expect(b.calls.spawns).toEqual([
      {
        commands: [{ execname: "./worker", args: ["-n", "a b"], maxprocs: 2, info: { wdir: "/tmp" } }],
        preput: { PARENT_ROOT_PORT_NAME: "tag#0$p$" },
      },
    ]);
    expect(await w.ask(frame("cmd=spawn;ncmds=2;subcmd=./a;maxprocs=1;"))).toBe(
      frame("cmd=spawn-response;rc=-1;errmsg=ncmds=2 but 1 subcmd entries;"),
    );
  });

  test("finalize, unknown commands, abort", async () => {
    const b = fakeBackend();
    const w = await v2(b);
    expect(await w.ask(frame("cmd=frob;thrid=0x9;"))).toBe(frame("cmd=frob-response;thrid=0x9;rc=-1;errmsg=unknown command frob;"));
    expect(await w.ask(frame("cmd=job-connect;jobid=1;"))).toBe(frame("cmd=job-connect-response;rc=-1;errmsg=job-connect is not supported;"));
    expect(await w.ask(frame("cmd=finalize;"))).toBe(frame("cmd=finalize-response;rc=0;"));
    expect(await w.ask(frame("cmd=abort;isworld=TRUE;msg=boom;"))).toBe("");
    expect(b.calls.aborts).toEqual([[1, "boom"]]);
    expect(w.closedByServer).toBe(true);
  });

  test("before fullinit, and a spawned rank's fullinit", async () => {
    const w = new Wire({ backend: fakeBackend({ spawned: true }) });
    await w.ask(V2_INIT);
    expect(await w.ask(frame("cmd=kvs-put;key=a;value=b;"))).toBe(frame("cmd=kvs-put-response;rc=-1;errmsg=fullinit required;"));
    expect(await w.ask(frame("cmd=fullinit;pmirank=4;"))).toBe(
      frame("cmd=fullinit-response;rc=-1;errmsg=pmirank 4 does not match rank 3 of this connection;"),
    );
    expect(await w.ask(frame("cmd=fullinit;pmijobid=42.0;pmirank=3;threaded=FALSE;"))).toBe(
      frame("cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=3;size=8;appnum=0;spawner-jobid=42.0;debugged=FALSE;pmiverbose=FALSE;rc=0;"),
    );
  });

  test("threaded clients: requests are served concurrently, replies carry their thrid", async () => {
    let release: () => void = () => {};
    const w = await v2(fakeBackend({}, { fence: () => new Promise<void>((r) => (release = r)) }));
    expect(await w.ask(frame("cmd=kvs-fence;thrid=0xa;") + frame("cmd=job-getid;thrid=0xb;"))).toBe(
      frame("cmd=job-getid-response;thrid=0xb;jobid=42.0;rc=0;"),
    );
    release();
    await w.settle();
    expect(w.take()).toBe(frame("cmd=kvs-fence-response;thrid=0xa;rc=0;"));
  });
});

describe("spawn and name service at the wire level, in MPICH 4.0's exact strings (simple_pmi.c)", () => {
  const info = (rank: number): PmiRankInfo => ({
    rank,
    size: 2,
    appnum: 0,
    kvsname: "kvs_9_0",
    jobId: "9.0",
    universeSize: 4,
    spawned: false,
    debug: false,
  });

  function job() {
    const names = new Map<string, string>();
    const spawns: unknown[] = [];
    const step = new NodeStepPmi([info(0), info(1)], {
      exchange: async (puts) => puts,
      publish: async (s, p) => !names.has(s) && (names.set(s, p), true),
      lookup: async (s) => names.get(s),
      unpublish: async (s) => names.delete(s),
      spawn: async (rank, req) => {
        spawns.push({ rank, req });
        return { rc: 0, errcodes: req.commands.flatMap((c) => new Array<number>(c.maxprocs).fill(0)) };
      },
    });
    return { step, names, spawns, wires: [new Wire({ backend: step.backend(0) }), new Wire({ backend: step.backend(1) })] as const };
  }

  test("PMI_Spawn_multiple: the block arrives in several writes, one per argument", async () => {
    const { wires, spawns } = job();
    const [w] = wires;
    await w.ask(V1_INIT);
    // simple_pmi.c flushes its buffer after each argN= line, then writes the rest with endcmd
    w.send("mcmd=spawn\nnprocs=2\nexecname=/opt/app/worker\ntotspawns=1\nspawnssofar=1\narg1=--mode\n");
    w.send("arg2=fast and loose\n");
    expect(await w.ask("argcnt=2\npreput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=tag#0$connentry#0A0B$\ninfo_num=1\ninfo_key_0=wdir\ninfo_val_0=/scratch\nendcmd\n")).toBe(
      "cmd=spawn_result rc=0 errcodes=0,0\n",
    );
    expect(spawns).toEqual([
      {
        rank: 0,
        req: {
          commands: [{ execname: "/opt/app/worker", args: ["--mode", "fast and loose"], maxprocs: 2, info: { wdir: "/scratch" } }],
          preput: { PARENT_ROOT_PORT_NAME: "tag#0$connentry#0A0B$" },
        },
      },
    ]);
  });

  test("MPI_Comm_spawn_multiple: two blocks, answered once after the last", async () => {
    const { wires, spawns } = job();
    const [w] = wires;
    await w.ask(V1_INIT);
    const block = (i: number, exe: string, n: number) =>
      `mcmd=spawn\nnprocs=${n}\nexecname=${exe}\ntotspawns=2\nspawnssofar=${i}\nargcnt=0\npreput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=p\ninfo_num=0\nendcmd\n`;
    expect(await w.ask(block(1, "./a", 1))).toBe("");
    expect(await w.ask(block(2, "./b", 3))).toBe("cmd=spawn_result rc=0 errcodes=0,0,0,0\n");
    expect(spawns).toEqual([
      {
        rank: 0,
        req: {
          commands: [
            { execname: "./a", args: [], maxprocs: 1, info: {} },
            { execname: "./b", args: [], maxprocs: 3, info: {} },
          ],
          preput: { PARENT_ROOT_PORT_NAME: "p" },
        },
      },
    ]);
  });

  test("a spawn block with a missing argument gets spawn_result rc=-1", async () => {
    const { wires, spawns } = job();
    const [w] = wires;
    await w.ask(V1_INIT);
    expect(await w.ask("mcmd=spawn\nnprocs=1\nexecname=./a\ntotspawns=1\nspawnssofar=1\nargcnt=2\narg1=x\ninfo_num=0\nendcmd\n")).toBe(
      "cmd=spawn_result rc=-1 msg=missing_arg2\n",
    );
    expect(spawns).toEqual([]);
  });

  test("publish on one rank, lookup on another", async () => {
    const { wires } = job();
    const [a, b] = wires;
    await a.ask(V1_INIT);
    await b.ask(V1_INIT);
    expect(await a.ask("cmd=publish_name service=ocean port=tag#0$description#node-3$\n")).toBe(
      "cmd=publish_result info=ok rc=0 msg=success\n",
    );
    expect(await b.ask("cmd=lookup_name service=ocean\n")).toBe("cmd=lookup_result port=tag#0$description#node-3$ info=ok rc=0 msg=success\n");
    expect(await b.ask("cmd=unpublish_name service=ocean\n")).toBe("cmd=unpublish_result info=ok rc=0 msg=success\n");
    expect(await a.ask("cmd=lookup_name service=ocean\n")).toBe("cmd=lookup_result info=fail rc=1 msg=service_not_found\n");
  });

  test("barrier_out goes to both ranks once both entered; puts of one are visible to the other", async () => {
    const { wires } = job();
    const [a, b] = wires;
    await a.ask(V1_INIT);
    await b.ask(V1_INIT);
    expect(await a.ask("cmd=put kvsname=kvs_9_0 key=-allgather-shm-1-0 value=20ADCA\n")).toBe("cmd=put_result rc=0 msg=success\n");
    expect(await a.ask("cmd=barrier_in\n")).toBe("");
    expect(await b.ask("cmd=get kvsname=kvs_9_0 key=-allgather-shm-1-0\n")).toBe(
      "cmd=get_result rc=-1 msg=key_-allgather-shm-1-0_not_found value=unknown\n",
    );
    expect(await b.ask("cmd=barrier_in\n")).toBe("cmd=barrier_out\n");
    expect(a.take()).toBe("cmd=barrier_out\n");
    expect(await b.ask("cmd=get kvsname=kvs_9_0 key=-allgather-shm-1-0\n")).toBe("cmd=get_result rc=0 msg=success value=20ADCA\n");
  });
});
