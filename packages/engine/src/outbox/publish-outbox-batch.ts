import { EngineError, toEngineError } from '../errors/engine-error.ts';
import { claimOutboxBatch, type DbOutboxMessage } from '../store/claim-outbox-batch.ts';
import { markOutboxPublished } from '../store/mark-outbox-published.ts';
import { recordOutboxFailure } from '../store/record-outbox-failure.ts';
import { releaseOutboxClaim } from '../store/release-outbox-claim.ts';
import { inSweepTransaction } from '../sweeps/in-sweep-transaction.ts';
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
 * claimOutboxBatch), publishes each through the transport its `destination` routes to, and marks it
 * Published once the transport acknowledged. A failure records `last_error` and schedules a retry
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
  const claimed = await inSweepTransaction(deps.prisma, config.transaction_timeout_ms, (tx) =>
    claimOutboxBatch(tx, {
      now: deps.clock.now(),
      limit: config.batch_size,
      visibilityTimeoutSeconds: config.visibility_timeout_seconds,
    }),
  );
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
  await Promise.all([...bySource.values()].map((rows) => publishSource(deps, rows, result)));
  if (result.claimed > 0) deps.logger.debug({ ...result }, 'outbox pass');
  return result;
}

/** Publishes one source's claimed rows in order; stops at the first that does not get through. */
async function publishSource(deps: OutboxPublisherDeps, rows: DbOutboxMessage[], result: OutboxBatchResult) {
  for (const [index, row] of rows.entries()) {
    const delivered = await publishRow(deps, row, result);
    if (!delivered) {
      await releaseRest(deps, rows.slice(index + 1), result);
      return;
    }
  }
}

/** True when the row was delivered AND recorded; false stops its source for this pass. */
async function publishRow(deps: OutboxPublisherDeps, row: DbOutboxMessage, result: OutboxBatchResult) {
  const log = { messageId: row.message_id, destination: row.destination, attempt: row.attempts };
  try {
    const transport = deps.routes[row.destination];
    if (transport === undefined) {
      throw new EngineError('outbox_unroutable', `no transport is configured for destination "${row.destination}"`);
    }
    await transport.publish(toOutboxEnvelope(row));
  } catch (err) {
    await recordFailure(deps, row, toEngineError(err, 'outbox_publish_failed'), result);
    return false;
  }
  try {
    const marked = await markOutboxPublished(deps.prisma, { id: row.id, now: deps.clock.now() });
    if (marked) {
      result.published++;
    } else {
      result.lost++;
      deps.logger.info(log, 'outbox row was already published by another claim; this delivery was a duplicate');
    }
    return true;
  } catch (err) {
    // Delivered but not recorded: the row is published again after its claim window (a duplicate the
    // consumer's inbox absorbs). Stop the source so nothing overtakes it meanwhile.
    deps.logger.warn({ ...log, err }, 'outbox row delivered but could not be marked Published; it will be sent again');
    return false;
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
