import type { components } from "./schema.js";

/** The API's error body: `{"error": {"code", "message", "requestId"}}`. */
export type ApiErrorBody = components["schemas"]["Error"];

/** Every failure of the client: the API's `code`, `message` and `requestId`, and the status
 * (0 when no answer arrived). `retryAfter` is the server's `Retry-After` in seconds. */
export class OpenStartupError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | null;
  readonly retryAfter: number | null;
  readonly body: ApiErrorBody | null;

  constructor(
    status: number,
    code: string,
    message: string,
    requestId: string | null = null,
    retryAfter: number | null = null,
    body: ApiErrorBody | null = null,
  ) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.requestId = requestId;
    this.retryAfter = retryAfter;
    this.body = body;
  }
}

/** 400 (e.g. `api_key_in_query`) and other 4xx without their own class. */
export class BadRequestError extends OpenStartupError {}
/** 401 `invalid_api_key`. */
export class AuthenticationError extends OpenStartupError {}
/** 403 `pro_required`, `email_not_confirmed`. */
export class PermissionDeniedError extends OpenStartupError {}
/** 404 `not_found`. */
export class NotFoundError extends OpenStartupError {}
/** 429 `monthly_quota_exceeded` or `rate_limited`; `retryAfter` says when to try again. */
export class RateLimitError extends OpenStartupError {}
/** 5xx after the retries. */
export class ServerError extends OpenStartupError {}
/** No answer (connection refused, reset, timeout) or an export stream cut short. */
export class ConnectionError extends OpenStartupError {}

export function errorFor(
  status: number,
  body: unknown,
  headers: Headers,
  retryAfter: number | null,
): OpenStartupError {
  const parsed = isErrorBody(body) ? body : null;
  const code = parsed?.error.code ?? `http_${status}`;
  const message = parsed?.error.message ?? `HTTP ${status}`;
  const requestId = parsed?.error.requestId ?? headers.get("x-request-id");
  const kind =
    status === 401
      ? AuthenticationError
      : status === 403
        ? PermissionDeniedError
        : status === 404
          ? NotFoundError
          : status === 429
            ? RateLimitError
            : status >= 500
              ? ServerError
              : BadRequestError;
  return new kind(status, code, message, requestId, retryAfter, parsed);
}

function isErrorBody(body: unknown): body is ApiErrorBody {
  if (typeof body !== "object" || body === null || !("error" in body)) return false;
  const error = (body as { error: unknown }).error;
  return typeof error === "object" && error !== null && "code" in error;
}
