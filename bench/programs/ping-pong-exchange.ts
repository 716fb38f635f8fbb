/** One ping-pong between ranks 0 and 1, `times` round trips, each received into `into` (recv(into), as OSU does; without it, as a new array). */
export interface PingPongWorld {
  rank: number;
  send(to: number, data: Uint8Array): Promise<void>;
  recv(from: number, tag: number, into?: Uint8Array): Promise<unknown>;
}

export async function exchange(world: PingPongWorld, buf: Uint8Array, into: Uint8Array | undefined, times: number): Promise<void> {
  const peer = 1 - world.rank;
  for (let i = 0; i < times; i++) {
    if (world.rank === 0) {
      await world.send(peer, buf);
      await world.recv(peer, 0, into);
    } else {
      await world.recv(peer, 0, into);
      await world.send(peer, buf);
    }
  }
}
