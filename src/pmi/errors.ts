/** Input that does not follow the wire grammar. `cmd` is set when the command name was readable, so a reply can still be sent. */
export class PmiCodecError extends Error {
  constructor(
    message: string,
    readonly cmd?: string,
  ) {
    super(message);
    this.name = "PmiCodecError";
  }
}

/** A PMI request failed: the server answered with a nonzero `rc`, or the connection broke. */
export class PmiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly rc?: number,
  ) {
    super(message);
    this.name = "PmiError";
  }
}
