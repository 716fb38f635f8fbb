/** A server-sent event stream read event by event (keep-alive comments skipped). */
export interface SseEvent {
  event: string;
  data: string;
}

export function sseEvents(body: NonNullable<Response["body"]>): { next(): Promise<SseEvent>; cancel(): Promise<void> } {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  return {
    async next() {
      for (;;) {
        const i = buf.indexOf("\n\n");
        if (i >= 0) {
          const chunk = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const event = /^event: (.*)$/m.exec(chunk)?.[1];
          if (!event) continue;
          return { event, data: chunk.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n") };
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("the stream ended");
        buf += value;
      }
    },
    cancel: () => reader.cancel(),
  };
}
