/**
 * The one mapping from a domain refusal to HTTP: its status, and the JSON body every error has
 * (`{error: {code, message, field?}}`). The launcher's WebSocket sends the same code, message and
 * field (roles/controller/launchers.ts).
 */
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { Refusal, type RefusalKind } from "../domain/refusal.ts";

export { badRequest, conflict, forbidden, notFound, Refusal } from "../domain/refusal.ts";

const STATUS: Record<RefusalKind, ContentfulStatusCode> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  too_many: 429,
  unavailable: 503,
};

export const statusOf = (r: Refusal): ContentfulStatusCode => STATUS[r.kind];

export interface ErrorBody {
  error: { code: string; message: string; field?: string };
}

export function errorBody(e: Refusal): ErrorBody {
  return { error: { code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) } };
}
