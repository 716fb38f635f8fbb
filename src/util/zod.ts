import type { z } from "zod";

/** "nodes: must be at least 1; env.FOO: expected string" — each issue names its field. */
export function describeIssues(error: z.ZodError, prefix = ""): string {
  return error.issues
    .map((i) => {
      const path = [prefix, ...i.path.map(String)].filter(Boolean).join(".");
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join("; ");
}

/** The first field an error names, for {error: {field}}. */
export function firstField(error: z.ZodError): string | undefined {
  const p = error.issues[0]?.path;
  return p && p.length > 0 ? p.map(String).join(".") : undefined;
}
