// The floor under ebb/comm's TCP path: Bun's own sockets between two processes on loopback, no
// framing and no library. `bun tcp-floor.ts` starts a receiver, then a sender that writes 4 MiB
// buffers as fast as the socket drains; it prints "tcp-floor bytes=4194304 MB/s=N".
const TOTAL = 2 ** 30;
const CHUNK = 4 << 20;

async function receive(): Promise<void> {
  let got = 0;
  let t0 = 0;
  const done = Promise.withResolvers<number>();
  const server = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(_s, d) {
        if (t0 === 0) t0 = Bun.nanoseconds();
        got += d.length;
        if (got >= TOTAL) done.resolve(Bun.nanoseconds() - t0);
      },
    },
  });
  const sender = Bun.spawn([process.execPath, import.meta.path, "send", String(server.port)], { stdout: "inherit", stderr: "inherit" });
  const ns = await done.promise;
  await sender.exited;
  server.stop(true);
  console.log(`tcp-floor bytes=${CHUNK} MB/s=${((TOTAL / ns) * 1000).toFixed(0)}`);
}

async function send(port: number): Promise<void> {
  const buf = new Uint8Array(CHUNK);
  let drained: () => void = () => {};
  const s = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {}, drain: () => drained() } });
  let rest = buf.subarray(0, 0);
  for (let sent = 0; sent < TOTAL; ) {
    if (rest.length === 0) rest = buf;
    const n = s.write(rest);
    sent += n;
    rest = rest.subarray(n);
    if (rest.length > 0) await new Promise<void>((r) => (drained = r));
  }
  s.end();
}

if (process.argv[2] === "send") await send(Number(process.argv[3]));
else await receive();
