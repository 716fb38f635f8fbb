/** Errors raised by ebb/comm. Every one carries a stable `code` so callers can branch without parsing text. */
export class CommError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * A peer this operation depends on is gone. `rank` is the peer's rank in `comm`. `exited` tells a
 * peer that shut down cleanly (finalize, exit code 0) from one that died (socket reset, SIGKILL,
 * connect refused, reported by another rank).
 */
export class PeerFailedError extends CommError {
  constructor(
    readonly rank: number,
    readonly comm: string,
    readonly peer: string,
    readonly reason: string,
    readonly exited: boolean,
  ) {
    super(
      exited ? "PEER_EXITED" : "PEER_FAILED",
      `ebb/comm: rank ${rank} of ${comm} ${exited ? "has exited" : "failed"}: ${reason}`,
    );
  }
}

/** The communicator was invalidated (replaced by an adaptation, or freed). */
export class InvalidCommError extends CommError {
  constructor(comm: string, reason: string) {
    super("COMM_INVALID", `ebb/comm: ${comm} is no longer valid: ${reason}`);
  }
}

/** The caller passed something the library cannot act on (a rank out of range, a bad tag, ...). */
export class CommUsageError extends CommError {
  constructor(message: string) {
    super("COMM_USAGE", `ebb/comm: ${message}`);
  }
}

/** The local transport was closed (finalize) before or while the operation ran. */
export class TransportClosedError extends CommError {
  constructor() {
    super("COMM_CLOSED", "ebb/comm: the transport is closed (finalize was called)");
  }
}

/**
 * Transport-level notice that a peer process is unreachable. It knows the process id only; the
 * communicator turns it into a PeerFailedError that names the rank.
 */
export class PeerDown extends Error {
  constructor(
    readonly peer: string,
    readonly reason: string,
    readonly exited: boolean,
  ) {
    super(`peer ${peer} ${exited ? "exited" : "failed"}: ${reason}`);
    this.name = "PeerDown";
  }
}
