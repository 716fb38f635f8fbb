/** Words as a shell would read them back: plain where nothing in them is special, else in single quotes ('' for an empty one). */
export function shellQuote(words: readonly string[]): string {
  return words.map((w) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`)).join(" ");
}
