import { EngineError } from '../errors/engine-error.ts';
import { encodeOutboxBody } from './outbox-envelope.ts';
import type { OutboxTransport } from './outbox-transport.ts';
import { encodeWebhookHeader, signWebhook, webhookHeaders } from './sign-webhook.ts';

export interface WebhookTransportOptions {
  url: string;
  /** Shared with the receiver, who checks the signature with {@link verifyWebhookSignature}. */
  secret: string;
  /** The whole request, connect to last byte; past it the attempt fails and is retried. Default 10 s. */
  timeoutMs?: number;
}

/**
 * POSTs each message as JSON, signed (HMAC-SHA256 over timestamp + body), with the message id in a
 * header for the receiver's dedup. A 2xx answer is the acknowledgement; anything else (a redirect
 * included: it is not followed), a network error or the timeout is a failure the publisher retries.
 *
 * @example
 * const routes = { billing: webhookTransport({ url: 'https://billing.internal/hooks', secret }) };
 */
export function webhookTransport(options: WebhookTransportOptions): OutboxTransport {
  const { timeoutMs } = checkedOptions(options);
  return {
    kind: 'webhook',
    async publish(message) {
      const body = encodeOutboxBody(message);
      const timestamp = Math.floor(Date.now() / 1000);
      let response: Response;
      try {
        response = await fetch(options.url, {
          method: 'POST',
          body,
          // A redirect is not an acknowledgement: followed, it would turn the POST into a GET without
          // its body (302, 303) or hand the signed message to another server (307, 308), and the last
          // hop's 2xx would mark the row Published (review 32). It fails like any other non-2xx.
          redirect: 'manual',
          signal: AbortSignal.timeout(timeoutMs),
          headers: {
            'content-type': 'application/json',
            [webhookHeaders.messageId]: encodeWebhookHeader(message.messageId),
            [webhookHeaders.messageType]: encodeWebhookHeader(message.type),
            [webhookHeaders.timestamp]: String(timestamp),
            [webhookHeaders.signature]: signWebhook(options.secret, timestamp, body),
          },
        });
      } catch (cause) {
        const timedOut = cause instanceof Error && cause.name === 'TimeoutError';
        throw new EngineError(
          'outbox_publish_failed',
          timedOut
            ? `webhook ${options.url} did not answer within ${timeoutMs} ms`
            : `webhook ${options.url} unreachable: ${cause instanceof Error ? cause.message : String(cause)}`,
          { cause },
        );
      }
      if (!response.ok) {
        const text = await response.text().catch(() => '');
        throw new EngineError(
          'outbox_publish_failed',
          `webhook ${options.url} answered ${response.status}${text === '' ? '' : `: ${text.slice(0, 200)}`}`,
        );
      }
      await response.body?.cancel().catch(() => undefined);
    },
  };
}

/** The options, checked when the transport is built: a bad one names its field instead of failing every publish. */
function checkedOptions(options: WebhookTransportOptions): { timeoutMs: number } {
  const refuse = (field: string, why: string) => new EngineError('invalid_input', `${field}: ${why}`, { field });
  if (typeof options !== 'object' || options === null) throw refuse('options', 'must be an object');
  const url = typeof options.url === 'string' && URL.canParse(options.url) ? new URL(options.url) : null;
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw refuse('url', 'must be an absolute http:// or https:// URL');
  if (typeof options.secret !== 'string' || options.secret.length === 0)
    throw refuse('secret', 'must be a non-empty string shared with the receiver');
  const timeoutMs = options.timeoutMs ?? 10_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 600_000)
    throw refuse('timeoutMs', 'must be a whole number of milliseconds from 1 to 600000');
  return { timeoutMs };
}
