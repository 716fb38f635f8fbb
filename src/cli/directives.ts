/**
 * `#EBB` lines at the top of a batch script are flags, as `#SBATCH` lines are for sbatch. They are
 * read until the first line that is neither blank nor a comment.
 */
export function directiveArgs(script: string): string[] {
  const out: string[] = [];
  const lines = script.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (i === 0 && line.startsWith("#!")) continue;
    if (line === "") continue;
    if (!line.startsWith("#")) break;
    const m = /^#EBB\s+(.*)$/.exec(line);
    if (m) out.push(...shellWords(m[1]!.replace(/\s+#.*$/, "")));
  }
  return out;
}

/** Splits on whitespace, honouring single and double quotes and backslashes. */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let cur = "";
  let quote: string | undefined;
  let has = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && i + 1 < text.length) cur += text[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      has = true;
    } else if (c === "\\" && i + 1 < text.length) {
      cur += text[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) words.push(cur);
      cur = "";
      has = false;
    } else {
      cur += c;
      has = true;
    }
  }
  if (has || cur) words.push(cur);
  return words;
}
