/**
 * Webhook signature verification per the Standard Webhooks specification
 * (https://www.standardwebhooks.com/): HMAC-SHA256 over `${id}.${timestamp}.${body}` with the
 * endpoint's `whsec_<base64>` secret, sent as `webhook-signature: v1,<base64> [v1,<base64> ...]`
 * beside `webhook-id` and `webhook-timestamp` (Unix seconds). Node only (node:crypto).
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

export type WebhookHeaders =
  | Headers
  | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Seconds a timestamp may be away from now, either way (default 300: 5 minutes). */
  toleranceSeconds?: number;
  /** The current time (for tests); default `new Date()`. */
  now?: Date;
}

function header(headers: WebhookHeaders, name: string): string {
  let value: string | string[] | null | undefined;
  if (typeof (headers as Headers).get === "function") {
    value = (headers as Headers).get(name);
  } else {
    const record = headers as Record<string, string | string[] | undefined>;
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  const text = Array.isArray(value) ? value.join(" ") : value;
  if (!text) throw new WebhookVerificationError(`Missing the ${name} header.`);
  return text;
}

/** The secret's key bytes: `whsec_` then base64. */
function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  const key = Buffer.from(encoded, "base64");
  if (key.length === 0) throw new WebhookVerificationError("The webhook secret is empty.");
  return key;
}

/** The signature (`v1,<base64>`) of a delivery: what the sender puts in `webhook-signature`. */
export function signWebhook(
  secret: string,
  id: string,
  timestamp: number,
  payload: string | Uint8Array,
): string {
  const body = typeof payload === "string" ? payload : Buffer.from(payload).toString("utf8");
  const digest = createHmac("sha256", secretKey(secret))
    .update(`${id}.${timestamp}.${body}`)
    .digest("base64");
  return `v1,${digest}`;
}

/**
 * Check a delivery and return its parsed JSON body; throws `WebhookVerificationError` when a
 * header is missing, the timestamp is outside the tolerance, or no `v1` signature matches.
 * Pass the raw body exactly as received (not re-serialized JSON).
 */
export function verifyWebhook(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyOptions = {},
): unknown {
  const id = header(headers, "webhook-id");
  const timestampText = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!/^\d{1,15}$/.test(timestampText)) {
    throw new WebhookVerificationError("The webhook-timestamp header is not Unix seconds.");
  }
  const timestamp = Number(timestampText);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookVerificationError("The webhook-timestamp is too old or too new.");
  }
  const expected = Buffer.from(signWebhook(secret, id, timestamp, payload).slice(3), "base64");
  const matches = signatures.split(" ").some((entry) => {
    const [version, signature] = entry.split(",", 2);
    if (version !== "v1" || !signature) return false;
    const given = Buffer.from(signature, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError("No webhook signature matches.");
  const body = typeof payload === "string" ? payload : Buffer.from(payload).toString("utf8");
  return JSON.parse(body);
}
