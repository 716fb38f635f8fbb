/** Reads a stream until `marker` has appeared; everything read so far. */
export async function readUntil(stream: ReadableStream<Uint8Array>, marker: string): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
    if (text.includes(marker)) return text;
  }
  throw new Error(`the stream ended before "${marker}": ${text}`);
}
