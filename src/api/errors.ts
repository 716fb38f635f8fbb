/** API errors: a status, a stable code, a message naming the field and what to do. */
import type { ContentfulStatusCode } from "hono/utils/http-status";

export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string, field?: string) => new ApiError(400, "invalid_request", message, field);
export const notFound = (what: string) => new ApiError(404, "not_found", `${what} does not exist`);
export const conflict = (code: string, message: string) => new ApiError(409, code, message);

export interface ErrorBody {
  error: { code: string; message: string; field?: string };
}

export function errorBody(e: ApiError): ErrorBody {
  return { error: { code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) } };
}
