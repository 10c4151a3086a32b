import type { Json } from '../definitions/define-action.ts';
import type { DbOutboxMessage } from '../store/claim-outbox-batch.ts';

/** One outbox row as a transport sees it. `messageId` is stable across redeliveries: consumers dedupe on it. */
export interface OutboxEnvelope {
  /** The outbox row's id. */
  readonly id: string;
  readonly messageId: string;
  readonly type: string;
  /** The route name that picked the transport. */
  readonly destination: string;
  readonly sourceKind: string;
  readonly sourceId: string;
  readonly payload: Json;
  readonly headers: Readonly<Record<string, string>>;
  /** 1 on the first delivery attempt. */
  readonly attempt: number;
  readonly createdAt: Date;
}

export function toOutboxEnvelope(row: DbOutboxMessage): OutboxEnvelope {
  return {
    id: row.id,
    messageId: row.message_id,
    type: row.type,
    destination: row.destination,
    sourceKind: row.source_kind,
    sourceId: row.source_id,
    payload: row.payload as Json,
    headers: stringHeaders(row.headers),
    attempt: row.attempts,
    createdAt: row.created_at,
  };
}

/**
 * The bytes a remote consumer receives (webhook body, NATS message data): the envelope minus the
 * delivery bookkeeping (row id, attempt), so a redelivery carries byte-identical content.
 */
export function encodeOutboxBody(envelope: OutboxEnvelope): string {
  return JSON.stringify({
    messageId: envelope.messageId,
    type: envelope.type,
    sourceKind: envelope.sourceKind,
    sourceId: envelope.sourceId,
    headers: envelope.headers,
    payload: envelope.payload,
    createdAt: envelope.createdAt.toISOString(),
  });
}

function stringHeaders(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [
      k,
      typeof v === 'string' ? v : JSON.stringify(v),
    ]),
  );
}
