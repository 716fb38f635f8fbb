/**
 * The version of the wire protocols between ebb's programs (agent and launcher to controller, the
 * step tree, the ranks' PMI extension commands; docs/adaptation.md §10). Two builds with the same
 * PROTOCOL_VERSION interoperate whatever their release (`VERSION`); any change a peer of the
 * previous version would misread raises it. The controller checks the number in each peer's
 * hello and refuses another one, or none (a peer older than the check), with `protocolRefusal`.
 */
import { VERSION } from "../util/version.ts";

export const PROTOCOL_VERSION = 13;

/**
 * Why the controller refuses a peer (`who`: "agent", "ebb run") whose hello says `protocol`
 * (undefined: it sent none, it is older than this check) and release `version`; undefined when it
 * speaks this protocol. Short: an agent gets it as a WebSocket close reason (at most 123 bytes).
 */
export function protocolRefusal(who: "agent" | "ebb run", protocol: number | undefined, version: string | undefined): string | undefined {
  if (protocol === PROTOCOL_VERSION) return undefined;
  const theirs = `${who} speaks protocol ${protocol ?? 0}${version ? ` (ebb ${version})` : ""}, the controller ${PROTOCOL_VERSION} (ebb ${VERSION})`;
  if (protocol !== undefined && protocol > PROTOCOL_VERSION) return `${theirs}: upgrade the controller${version ? ` to ebb ${version}` : ""}`;
  return `${theirs}: upgrade ${who === "agent" ? "this node's" : "this"} ebb to ${VERSION}`;
}
