/**
 * A union of messages told apart by their `t`: one object schema per kind, each built the first
 * time a message of that kind is parsed. A z.discriminatedUnion builds all of its members at its
 * first parse, ~3 ms for the step tree's ten up-messages at the start of every `ebb run`, which
 * receives two or three kinds of them.
 */
import { z } from "zod";

type Shapes = Record<string, () => z.ZodRawShape>;
type Member<K extends string, S extends z.ZodRawShape> = z.ZodObject<{ t: z.ZodLiteral<K> } & S>;

/** The message type of a tagged union: `{ t: K, ...shape }` for each kind K. */
export type Tagged<M extends Shapes> = { [K in keyof M & string]: z.infer<Member<K, ReturnType<M[K]>>> }[keyof M & string];

/** What a channel parses its messages with: a zod schema or a tagged union. */
export interface MessageSchema<T> {
  safeParse(raw: unknown): z.ZodSafeParseResult<T>;
}

export interface TaggedUnion<T> extends MessageSchema<T> {
  readonly kinds: readonly string[];
}

/**
 * `fast`: for some kinds, a hand-written parse that returns what the kind's schema would, or
 * undefined when unsure (then the schema decides, and its errors are what a refusal says).
 */
export function tagged<M extends Shapes>(shapes: M, fast: { [K in keyof M & string]?: (raw: Record<string, unknown>) => Tagged<M> | undefined } = {}): TaggedUnion<Tagged<M>> {
  const kinds = Object.keys(shapes);
  const built = new Map<string, z.ZodType>();
  const refuse = (message: string, path: string[], input: unknown) =>
    ({ success: false, error: new z.ZodError([{ code: "custom", message, path, input }]) }) as z.ZodSafeParseResult<Tagged<M>>;
  return {
    kinds,
    safeParse(raw) {
      if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return refuse("expected an object", [], raw);
      const t = (raw as { t?: unknown }).t;
      if (typeof t !== "string" || !Object.hasOwn(shapes, t)) return refuse(`expected one of ${kinds.map((k) => `"${k}"`).join(", ")}`, ["t"], t);
      const quick = Object.hasOwn(fast, t) ? fast[t]!(raw as Record<string, unknown>) : undefined;
      if (quick) return { success: true, data: quick } as z.ZodSafeParseResult<Tagged<M>>;
      // `t` is checked already: the kind's schema holds its other fields.
      let schema = built.get(t);
      if (!schema) built.set(t, (schema = z.object(shapes[t]!())));
      const r = schema.safeParse(raw);
      return (r.success ? { success: true, data: { t, ...(r.data as object) } } : r) as z.ZodSafeParseResult<Tagged<M>>;
    },
  };
}

/** The messages a tagged union (or any message schema) parses to. */
export type MessageOf<U> = U extends MessageSchema<infer T> ? T : never;
