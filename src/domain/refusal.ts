/**
 * A typed refusal: what domain code throws when a request cannot be done. It names its kind (which
 * `api/errors.ts` alone turns into an HTTP status), a stable code, a message that says what to do
 * next, and the field at fault when there is one.
 */

export type RefusalKind = "invalid" | "unauthorized" | "forbidden" | "not_found" | "conflict" | "too_large" | "too_many" | "unavailable";

export class Refusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string, field?: string) => new Refusal("invalid", "invalid_request", message, field);
export const notFound = (what: string) => new Refusal("not_found", "not_found", `${what} does not exist`);
export const conflict = (code: string, message: string, field?: string) => new Refusal("conflict", code, message, field);
export const forbidden = (message: string) => new Refusal("forbidden", "forbidden", message);
