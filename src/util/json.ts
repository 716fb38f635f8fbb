/**
 * JSON from a sender that is not trusted (a request body, a user's launcher, a peer not yet
 * authenticated, a file a rank wrote): nesting of arrays and objects is refused past MAX_JSON_DEPTH
 * before JSON.parse sees it. Bun's parser takes seconds on a few MB of `[[[[…` (one 3 MB WebSocket
 * frame held an agent's thread ~4 s and its node went DOWN; 8 MB in a rank's CFG file, read by its
 * agent, the same; 15 MB on a launcher socket held the controller ~19 s); 512 levels take ~1 ms,
 * 8,192 ~70 ms. The check is one pass over the text, strings skipped by indexOf: 0.2-0.8 of a
 * parse's CPU (a 3.7 KB launch ~0.3, 0.5 MB of small objects ~0.5-0.9), so trusted senders (agents,
 * the controller) are not scanned, nor texts no longer than the limit, which cannot pass it.
 */

/** Arrays and objects within one another that such JSON may have; ebb's own messages nest < 20. */
export const MAX_JSON_DEPTH = 512;

export class JsonTooDeep extends Error {
  constructor(readonly maxDepth: number) {
    super(`JSON nested deeper than ${maxDepth} levels of arrays and objects`);
  }
}

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_ARRAY = 91;
const OPEN_OBJECT = 123;
const CLOSE_ARRAY = 93;
const CLOSE_OBJECT = 125;

/** Whether `text` opens more than `maxDepth` arrays and objects within one another (outside strings). */
export function nestedDeeper(text: string, maxDepth: number): boolean {
  if (text.length <= maxDepth) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // A string's inside, skipped by indexOf (most of a message's bytes): its closing quote is the
      // first one after an even number of backslashes.
      for (;;) {
        const q = text.indexOf('"', i + 1);
        if (q < 0) return false; // unterminated: JSON.parse refuses it
        let b = q - 1;
        while (text.charCodeAt(b) === BACKSLASH) b--;
        i = q;
        if ((q - 1 - b) % 2 === 0) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}

/** JSON.parse, but text nested deeper than `maxDepth` throws JsonTooDeep without being parsed. */
export function parseJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  if (nestedDeeper(text, maxDepth)) throw new JsonTooDeep(maxDepth);
  return JSON.parse(text);
}
