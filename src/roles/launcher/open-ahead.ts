/**
 * A grow's connections to the nodes it adds, opened as soon as their addresses are known: at the
 * controller's `links` (docs/adaptation.md §7.1), else at the order (`realloc`) itself, instead of
 * when the resize's launch goes out. Bun writes a new connection's upgrade request only when the
 * event loop next polls, and a resize's start is a stretch of work in one turn (remap, preput, the
 * joining step's root, the first count), which held the upgrade requests back until it was done.
 * So an order that comes while connections opened in this turn wait for that poll is handed on
 * after it (a 0 ms timer runs after the poll; an immediate would not), and every order after it
 * too, so that they keep their order.
 */
import type { NodeRef } from "../../proto/common.ts";
import type { ReallocMsg } from "./controller-link.ts";

export class OpenAhead {
  /** Connections opened since the event loop last polled. */
  private unwritten = false;
  /** Orders handed on after the poll, not yet handed. */
  private held = 0;

  constructor(
    /** Opens the edge to `addr` if it has no connection (PeerPool.prepare): true if it opened one. */
    private readonly open: (addr: string) => boolean,
    private readonly onRealloc: (m: ReallocMsg) => void,
  ) {}

  links(nodes: readonly NodeRef[]): void {
    this.openAll(nodes);
  }

  realloc(m: ReallocMsg): void {
    this.openAll(m.added);
    if (!this.unwritten && this.held === 0) return this.onRealloc(m);
    this.held++;
    setTimeout(() => {
      this.held--;
      this.onRealloc(m);
    }, 0);
  }

  private openAll(nodes: readonly NodeRef[]): void {
    let opened = false;
    for (const n of nodes) opened = this.open(n.addr) || opened;
    if (!opened || this.unwritten) return;
    this.unwritten = true;
    setTimeout(() => (this.unwritten = false), 0);
  }
}
