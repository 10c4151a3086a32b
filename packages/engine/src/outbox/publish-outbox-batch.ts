import { EngineError, toEngineError } from '../errors/engine-error.ts';
import { claimOutboxBatch, type DbOutboxMessage } from '../store/claim-outbox-batch.ts';
import { markOutboxBatchPublished } from '../store/mark-outbox-batch-published.ts';
import { recordOutboxFailure } from '../store/record-outbox-failure.ts';
import { releaseOutboxClaim } from '../store/release-outbox-claim.ts';
import { outboxBackoffMs } from './outbox-backoff.ts';
import { toOutboxEnvelope } from './outbox-envelope.ts';
import {
  resolveOutboxPublisher,
  type OutboxPublisherDeps,
  type OutboxPublisherOptions,
} from './outbox-publisher-options.ts';

/** What one pass did. `lost`: published, but a rival had already marked the row (a duplicate went out). */
export interface OutboxBatchResult {
  claimed: number;
  published: number;
  retried: number;
  dead: number;
  released: number;
  lost: number;
}

const maxErrorLength = 1000;

/**
 * One pass of the outbox publisher: claims due rows (SKIP LOCKED; per-source order; see
 * claimOutboxBatch), publishes each through the transport its `destination` routes to, and marks the
 * rows the transports acknowledged Published in one statement once the batch's deliveries are done
 * (ADR 0026). A failure records `last_error` and schedules a retry
 * with exponential backoff, or marks the row Dead after `max_attempts`; the rows behind it from the
 * same source go back unpublished, so a source's messages leave in the order they were written.
 * Sources are published concurrently. At-least-once: see ADR 0009.
 *
 * @example
 * const result = await publishOutboxBatch({ db, routes: { billing: webhookTransport({ url, secret }) } });
 */
export async function publishOutboxBatch(options: OutboxPublisherOptions): Promise<OutboxBatchResult> {
  return publishWith(resolveOutboxPublisher(options));
}

/** @internal The loop resolves its options once and calls this every pass. */
export async function publishWith(deps: OutboxPublisherDeps): Promise<OutboxBatchResult> {
  const { config } = deps;
  const claimed = await claimOutboxBatch(deps.prisma, {
    now: deps.clock.now(),
    limit: config.batch_size,
    visibilityTimeoutSeconds: config.visibility_timeout_seconds,
    timeoutMs: config.transaction_timeout_ms,
  });
  const result: OutboxBatchResult = {
    claimed: claimed.length,
    published: 0,
    retried: 0,
    dead: 0,
    released: 0,
    lost: 0,
  };
  const bySource = new Map<string, DbOutboxMessage[]>();
  for (const row of claimed) bySource.set(row.source_id, [...(bySource.get(row.source_id) ?? []), row]);
  const delivered = await Promise.all([...bySource.values()].map((rows) => publishSource(deps, rows, result)));
  await markDelivered(deps, delivered.flat(), result);
  if (result.claimed > 0) deps.logger.debug({ ...result }, 'outbox pass');
  return result;
}

/** Publishes one source's claimed rows in order; stops at the first that does not get through. Returns those delivered. */
async function publishSource(deps: OutboxPublisherDeps, rows: DbOutboxMessage[], result: OutboxBatchResult) {
  for (const [index, row] of rows.entries()) {
    if (!(await deliverRow(deps, row, result))) {
      await releaseRest(deps, rows.slice(index + 1), result);
      return rows.slice(0, index);
    }
  }
  return rows;
}

/** True when the transport acknowledged the row; false (failure recorded) stops its source for this pass. */
async function deliverRow(deps: OutboxPublisherDeps, row: DbOutboxMessage, result: OutboxBatchResult) {
  try {
    const transport = deps.routes[row.destination];
    if (transport === undefined) {
      throw new EngineError('outbox_unroutable', `no transport is configured for destination "${row.destination}"`);
    }
    await transport.publish(toOutboxEnvelope(row));
    return true;
  } catch (err) {
    await recordFailure(deps, row, toEngineError(err, 'outbox_publish_failed'), result);
    return false;
  }
}

/**
 * Marks the batch's delivered rows Published in one statement. Until it commits they stay claimed
 * (their claim window holds back the rows behind them), so nothing overtakes them. If it fails, every
 * row of it is delivered again after its claim window: duplicates the consumer's inbox absorbs.
 */
async function markDelivered(deps: OutboxPublisherDeps, rows: DbOutboxMessage[], result: OutboxBatchResult) {
  if (rows.length === 0) return;
  try {
    const marked = await markOutboxBatchPublished(deps.prisma, {
      ids: rows.map((row) => row.id),
      now: deps.clock.now(),
    });
    result.published += marked.size;
    for (const row of rows.filter((r) => !marked.has(r.id))) {
      result.lost++;
      deps.logger.info(
        { messageId: row.message_id, destination: row.destination, attempt: row.attempts },
        'outbox row was already published by another claim; this delivery was a duplicate',
      );
    }
  } catch (err) {
    deps.logger.warn(
      { rows: rows.length, err },
      'outbox rows delivered but could not be marked Published; they will be sent again',
    );
  }
}

async function recordFailure(
  deps: OutboxPublisherDeps,
  row: DbOutboxMessage,
  error: EngineError,
  result: OutboxBatchResult,
) {
  const { config } = deps;
  const delayMs = outboxBackoffMs(row.attempts, {
    baseDelayMs: config.backoff.base_delay_ms,
    maxDelayMs: config.backoff.max_delay_ms,
  });
  const log = { messageId: row.message_id, destination: row.destination, attempt: row.attempts, code: error.code };
  try {
    const status = await recordOutboxFailure(deps.prisma, {
      id: row.id,
      attempts: row.attempts,
      maxAttempts: config.max_attempts,
      retryAt: new Date(deps.clock.now().getTime() + delayMs),
      error: error.message.slice(0, maxErrorLength),
    });
    if (status === 'Dead') {
      result.dead++;
      deps.logger.error({ ...log, err: error }, 'outbox row is Dead: max attempts reached');
    } else if (status === 'Pending') {
      result.retried++;
      deps.logger.warn({ ...log, err: error, retryInMs: delayMs }, 'outbox publish failed; will retry');
    } else {
      deps.logger.info(log, 'outbox publish failed after its claim window lapsed; the newer claim decides');
    }
  } catch (err) {
    deps.logger.warn({ ...log, err }, 'could not record an outbox failure; the row is retried after its claim window');
  }
}

async function releaseRest(deps: OutboxPublisherDeps, rows: DbOutboxMessage[], result: OutboxBatchResult) {
  for (const row of rows) {
    const released = await releaseOutboxClaim(deps.prisma, {
      id: row.id,
      attempts: row.attempts,
      now: deps.clock.now(),
    }).catch((err: unknown) => {
      deps.logger.warn({ messageId: row.message_id, err }, 'could not release an outbox claim; it lapses on its own');
      return false;
    });
    if (released) result.released++;
  }
}
