/**
 * Worlds from memberships. A world is data: an ordered list of cards (rank -> card) plus a
 * generation number that fixes its context id. The initial world comes from the bootstrap (PMI
 * KVS: put card, fence, get cards); later worlds come from any membership the adaptation code
 * computes, on the same Transport, so connections between staying processes are reused.
 */
import { mark } from "../util/trace.ts";
import { cardKey } from "../proto/adapt.ts";
import { Comm, contextOf, RESERVED_CONTEXTS } from "./comm.ts";
import { CommError, CommUsageError } from "./errors.ts";
import { type Card, Transport, type TransportOptions } from "./transport.ts";

/**
 * What ebb/comm needs from process management (PMI-1/2 through the agent, or a test stand-in).
 * Calls take effect in the order they are made: initWorld enters the fence without waiting for its
 * put to be answered, and asks for every card at once.
 */
export interface Bootstrap {
  rank: number;
  size: number;
  node: string;
  put(key: string, value: string): Promise<void> | void;
  get(key: string): Promise<string | undefined>;
  fence(): Promise<void>;
}

export interface WorldOptions extends Partial<Omit<TransportOptions, "node">> {
  /** World generation (0 at launch; each adaptation adds one). Sets the card keys and the context id. */
  generation?: number;
  /** Reuse an open transport instead of opening one. */
  transport?: Transport;
}

let current: Transport | undefined;

export function parseCard(text: string): Card {
  let c: unknown;
  try {
    c = JSON.parse(text);
  } catch {
    throw new CommError("BAD_CARD", `ebb/comm: business card is not JSON: ${text.slice(0, 80)}`);
  }
  const card = c as Partial<Card> | null;
  if (!card || typeof card.id !== "string" || typeof card.node !== "string" || (card.unix === undefined && card.tcp === undefined)) {
    throw new CommError("BAD_CARD", `ebb/comm: malformed business card: ${text.slice(0, 80)}`);
  }
  return card as Card;
}

/** Opens this process's transport (listeners up, card ready); the first one opened is what finalize() closes. */
export function openTransport(opts: TransportOptions): Transport {
  const t = Transport.open(opts);
  current ??= t;
  return t;
}

/** The transport initWorld/openTransport opened first in this process, if any. */
export function currentTransport(): Transport | undefined {
  return current;
}

/**
 * Wire-up: open listeners, put this rank's card, fence, read every card, build the world.
 * Connections are made lazily, on first use.
 */
export async function initWorld(boot: Bootstrap, opts: WorldOptions = {}): Promise<Comm> {
  const generation = opts.generation ?? 0;
  const { generation: _g, transport: given, ...topts } = opts;
  const t = given ?? openTransport({ ...topts, node: boot.node });
  mark("r.transport-open");
  await Promise.all([boot.put(cardKey(boot.rank, generation), t.cardText), boot.fence()]);
  mark("r.fenced");
  const texts = await Promise.all(
    Array.from({ length: boot.size }, (_, r) => (r === boot.rank ? t.cardText : boot.get(cardKey(r, generation)))),
  );
  const cards = texts.map((text, r) => {
    if (text === undefined) throw new CommError("BAD_CARD", `ebb/comm: no business card for rank ${r} after the fence`);
    return parseCard(text);
  });
  return createWorld(t, cards, { generation });
}

/**
 * A world over `members` (rank i = members[i]) on an open transport. For an adaptation: the new
 * membership is the staying cards in their old rank order followed by the joining cards, with
 * generation + 1; then call oldWorld.invalidate() (at commit) to retire the old tree.
 */
export function createWorld(
  transport: Transport,
  members: readonly Card[],
  opts: { generation?: number; name?: string } = {},
): Comm {
  const generation = opts.generation ?? 0;
  const rank = members.findIndex((c) => c.id === transport.id);
  if (rank < 0) throw new CommUsageError("this process is not a member of the new world");
  const ctx = contextOf(generation);
  transport.nextCtx = Math.max(transport.nextCtx, ctx + RESERVED_CONTEXTS);
  transport.localRanks = members.filter((c) => c.node === transport.node).length;
  return new Comm(transport, { ctx, rank, members: [...members], name: opts.name ?? `world(g${generation})` });
}

/** Clean shutdown of this process's transport: pending sends go out, peers get BYE. */
export async function finalize(): Promise<void> {
  await current?.close();
}
