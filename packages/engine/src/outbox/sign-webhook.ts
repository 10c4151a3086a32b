import { createHmac, timingSafeEqual } from 'node:crypto';

/** The headers a webhook request carries. */
export const webhookHeaders = {
  messageId: 'x-sagaflow-message-id',
  messageType: 'x-sagaflow-message-type',
  timestamp: 'x-sagaflow-timestamp',
  signature: 'x-sagaflow-signature',
} as const;

/**
 * A header value as ASCII: `%` and every character outside printable ASCII are percent-encoded
 * UTF-8, so an id in any script can travel in a header (HTTP headers carry Latin-1 at most).
 * An ASCII id without `%` is sent as it is. Receivers read it back with {@link decodeWebhookHeader}.
 */
export function encodeWebhookHeader(value: string): string {
  return value.replace(/[^\x20-\x24\x26-\x7e]/gu, (ch) => encodeURIComponent(ch));
}

/** The receiver's side of {@link encodeWebhookHeader}. */
export function decodeWebhookHeader(value: string): string {
  return decodeURIComponent(value);
}

/** `v1=` + hex HMAC-SHA256 of `${timestamp}.${body}` under the shared secret. */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * The receiver's check: the signature matches the body and timestamp under `secret` (constant-time
 * compare), and the timestamp is within `toleranceSeconds` of `now` (stops replays of old requests).
 *
 * @example
 * const ok = verifyWebhookSignature({ secret, body: rawBody,
 *   timestamp: req.headers['x-sagaflow-timestamp'], signature: req.headers['x-sagaflow-signature'] });
 */
export function verifyWebhookSignature(args: {
  secret: string;
  body: string;
  timestamp: string | undefined;
  signature: string | undefined;
  toleranceSeconds?: number;
  now?: Date;
}): boolean {
  if (args.timestamp === undefined || args.signature === undefined) return false;
  const timestamp = Number(args.timestamp);
  if (!Number.isInteger(timestamp)) return false;
  const nowSeconds = Math.floor((args.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - timestamp) > (args.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signWebhook(args.secret, timestamp, args.body));
  const given = Buffer.from(args.signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
