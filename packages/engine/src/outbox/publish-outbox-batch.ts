import { EngineError, toEngineError } from '../errors/engine-error.ts';
import { claimOutboxBatch, type DbOutboxMessage } from '../store/claim-outbox-batch.ts';
import { markOutboxBatchPublished } from '../store/mark-outbox-batch-published.ts';
import { recordOutboxFailure } from '../store/record-outbox-failure.ts';
import { releaseOutboxClaim } from '../store/release-outbox-claim.ts';
import { outboxBackoffMs } from './outbox-backoff.ts';
import { renewBelowMs, renewClaimWindow } from './renew-claim-window.ts';
import { inSweepTransaction } from '../sweeps/in-sweep-transaction.ts';
import type { Prisma } from '../generated/prisma/client.ts';
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
/** Time kept back from the claim window for recording the outcome of the last publish in it. */
const claimMarginMs = 250;
/** How long a Published mark waits for a row another session holds before it skips it (ADR 0131). */
const markLockWaitMs = 1_000;

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
  const deps = resolveOutboxPublisher(options);
  const { result, outstanding } = await publishWith(deps, createPublishedMarker(deps), {
    limit: deps.config.batch_size,
  });
  await outstanding;
  return result;
}

/** One pass as the loop runs it: what it did so far, and the sources it left still publishing. */
export interface OutboxPass {
  result: OutboxBatchResult;
  /** Settles once every source of the pass is done and its delivered rows are marked (never rejects). */
  outstanding: Promise<void>;
  /** Rows of the pass whose source was still publishing when the pass returned. */
  stillOut: number;
}

/**
 * @internal The loop resolves its options once and calls this every pass. Sources publish
 * concurrently, and each source's delivered rows are marked Published as it finishes, together with
 * whatever other sources finished meanwhile (the marker). With `detachAfterMs` the pass returns once
 * that long has passed even if some sources are still publishing: their rows stay claimed (their
 * source is held back), they finish and are marked on their own, and the loop goes on with the
 * other sources (review 32: one slow or hung consumer costs only its own source).
 */
export async function publishWith(
  deps: OutboxPublisherDeps,
  marker: PublishedMarker,
  opts: { limit: number; detachAfterMs?: number },
): Promise<OutboxPass> {
  const { config } = deps;
  const claimedAt = performance.now();
  const claimed = await claimOutboxBatch(deps.prisma, {
    now: deps.clock.now(),
    limit: opts.limit,
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
  // The claim window in this process's own time: a publish never runs past it (another publisher
  // may claim the rows once it lapses), and a source whose window ran out leaves the rest of its rows.
  // It counts from the moment whose time the claim wrote (`claimedAt`), not from when the claim came
  // back: a claim that waited for a connection (a starved pool) had already spent that wait of its
  // window, and a publish counted from its return ran past it while a rival sent the row too (review 54).
  let windowEndsAt = claimedAt + config.visibility_timeout_seconds * 1000;
  // A claim that came back with less than half its window left (it waited for a connection, or the
  // database was slow) is renewed for the whole batch in one statement before anything is sent: its
  // publishes get their own deadline, not what the claim's wait left of the window (ADR 0139).
  const renewal = leftOf(windowEndsAt) < renewBelowMs(config) ? await renewClaimWindow(deps, claimed) : null;
  if (renewal !== null) windowEndsAt = renewal.endsAt;
  const bySource = new Map<string, DbOutboxMessage[]>();
  for (const row of claimed) bySource.set(row.source_id, [...(bySource.get(row.source_id) ?? []), row]);
  let done = 0;
  const sources = [...bySource.values()].map(async (all) => {
    // A row the renewal did not keep is another claim's now: its source stops before it, and hands
    // back the rows behind it, so they go after it, in order.
    const lost = renewal === null ? -1 : all.findIndex((row) => !renewal.kept.has(row.id));
    const rows = lost === -1 ? all : all.slice(0, lost);
    if (lost !== -1) await releaseRest(deps, all.slice(lost + 1), result);
    const delivered = await publishSource(deps, rows, result, windowEndsAt).catch((err: unknown) => {
      deps.logger.warn(
        { err, rows: rows.length },
        'outbox source failed unexpectedly; its rows are retried after their claim window',
      );
      return [];
    });
    await marker.mark(delivered, result);
    done += all.length;
  });
  const outstanding = Promise.all(sources).then(() => {
    if (result.claimed > 0) deps.logger.debug({ ...result }, 'outbox pass');
  });
  if (opts.detachAfterMs === undefined) await outstanding;
  else {
    let timer: NodeJS.Timeout | undefined;
    const detach = new Promise<void>((resolve) => (timer = setTimeout(resolve, opts.detachAfterMs)));
    await Promise.race([outstanding, detach]);
    clearTimeout(timer);
  }
  return { result, outstanding, stillOut: claimed.length - done };
}

/**
 * Publishes one source's claimed rows in order; stops at the first that does not get through. Returns
 * those delivered, which the marker marks once the source ends. The marker may queue them behind other
 * marks (a slow database): a window already half gone is renewed first, so no rival claims a row this
 * publisher delivered and has not yet marked (ADR 0139).
 */
async function publishSource(
  deps: OutboxPublisherDeps,
  rows: DbOutboxMessage[],
  result: OutboxBatchResult,
  claimEndsAt: number,
) {
  const window = { endsAt: claimEndsAt };
  const delivered = rows.slice(0, await sendInOrder(deps, rows, result, window));
  if (delivered.length > 0 && leftOf(window.endsAt) < renewBelowMs(deps.config))
    await renewClaimWindow(deps, delivered);
  return delivered;
}

/** Sends the rows in order until one does not get through; returns how many were delivered. */
async function sendInOrder(
  deps: OutboxPublisherDeps,
  rows: DbOutboxMessage[],
  result: OutboxBatchResult,
  window: { endsAt: number },
) {
  // The first row a renewal did not keep (another claim's now, or held by another session): its window is
  // not the one renewed, so the source stops before it, as it does when the row itself was not kept.
  let keptUpTo = rows.length;
  for (const [index, row] of rows.entries()) {
    // Less than half the window left: renewed before this row is sent, for the whole source: the rows
    // ahead of it, delivered but marked only when the source ends, and the ones behind it. So the
    // publish has its own deadline and no rival claims a row this publisher still holds (ADR 0139).
    if (leftOf(window.endsAt) < renewBelowMs(deps.config)) {
      const renewal = await renewClaimWindow(deps, rows.slice(0, keptUpTo));
      if (renewal !== null) {
        const lost = rows.findIndex((r, i) => i >= index && i < keptUpTo && !renewal.kept.has(r.id));
        if (lost !== -1) keptUpTo = lost;
        window.endsAt = renewal.endsAt;
      }
    }
    if (index >= keptUpTo) {
      await releaseRest(deps, rows.slice(index + 1), result);
      return index;
    }
    // Rows whose claim is about to lapse are left to the next claim, in order, not published late.
    const leftMs = leftOf(window.endsAt);
    if (leftMs <= 0) {
      await releaseRest(deps, rows.slice(index), result);
      return index;
    }
    if (!(await deliverRow(deps, row, result, leftMs))) {
      await releaseRest(deps, rows.slice(index + 1), result);
      return index;
    }
  }
  return rows.length;
}

/** What is left of a claim window that ends at `windowEndsAt`, less the time kept to record an outcome. */
function leftOf(windowEndsAt: number): number {
  return Math.floor(windowEndsAt - performance.now()) - claimMarginMs;
}

/** True when the transport acknowledged the row; false (failure recorded) stops its source for this pass. */
async function deliverRow(deps: OutboxPublisherDeps, row: DbOutboxMessage, result: OutboxBatchResult, leftMs: number) {
  try {
    const transport = Object.hasOwn(deps.routes, row.destination) ? deps.routes[row.destination] : undefined;
    if (transport === undefined) {
      throw new EngineError('outbox_unroutable', `no transport is configured for destination "${row.destination}"`);
    }
    await acknowledgedWithin(transport.kind, transport.publish(toOutboxEnvelope(row)), {
      ms: Math.min(deps.config.publish_timeout_ms, leftMs),
    });
    return true;
  } catch (err) {
    await recordFailure(deps, row, toEngineError(err, 'outbox_publish_failed'), result);
    return false;
  }
}

/**
 * A publish that is not acknowledged within `publish_timeout_ms` (never past what is left of the claim
 * window: another publisher may take the row from then on) fails like any other: recorded, retried with backoff, Dead
 * after max_attempts. The transport's own promise is left to settle; if it delivered after all, the
 * consumer's inbox absorbs the redelivery (ADR 0009).
 */
async function acknowledgedWithin(kind: string, publishing: Promise<void>, { ms }: { ms: number }) {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new EngineError('outbox_publish_failed', `the ${kind} transport did not acknowledge within ${ms} ms`)),
      ms,
    );
  });
  publishing.catch(() => undefined);
  try {
    await Promise.race([publishing, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Marks delivered rows Published; rows handed to it while a mark is being sent go together in the next. */
export interface PublishedMarker {
  /** Settles once these rows' mark is done (never rejects: a failed mark is logged, the rows go again). */
  mark(rows: DbOutboxMessage[], result: OutboxBatchResult): Promise<void>;
}

/**
 * The publisher's marks, one statement at a time: rows delivered while one is out (or in the same turn
 * of the event loop) go together in the next, so a batch of quick deliveries is still one or two
 * statements (ADR 0026), and a source that finishes late is marked without waiting for the others.
 */
export function createPublishedMarker(deps: OutboxPublisherDeps): PublishedMarker {
  let waiting: { row: DbOutboxMessage; result: OutboxBatchResult }[] = [];
  let tail = Promise.resolve();
  return {
    mark(rows, result) {
      if (rows.length === 0) return Promise.resolve();
      const first = waiting.length === 0;
      waiting.push(...rows.map((row) => ({ row, result })));
      if (first)
        tail = tail
          .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
          .then(async () => {
            const batch = waiting;
            waiting = [];
            await markDelivered(deps, batch);
          });
      return tail;
    },
  };
}

/**
 * Marks delivered rows Published in one statement. Until it commits they stay claimed (their claim
 * window holds back the rows behind them), so nothing overtakes them. If it fails, every row of it is
 * delivered again after its claim window: duplicates the consumer's inbox absorbs.
 */
async function markDelivered(
  deps: OutboxPublisherDeps,
  entries: { row: DbOutboxMessage; result: OutboxBatchResult }[],
) {
  const rows = entries.map((e) => e.row);
  try {
    const { marked, held } = await markOutboxBatchPublished(deps.prisma, {
      ids: rows.map((row) => row.id),
      now: deps.clock.now(),
      // A short transaction holding a row (a requeue, a rival's mark) is waited out; a long hold is not.
      lockWaitMs: Math.min(markLockWaitMs, deps.config.publish_timeout_ms),
      timeoutMs: deps.config.transaction_timeout_ms,
    });
    for (const { row, result } of entries) {
      if (marked.has(row.id)) {
        result.published++;
        continue;
      }
      if (held.has(row.id)) {
        deps.logger.warn(
          { messageId: row.message_id, destination: row.destination, attempt: row.attempts },
          'outbox row delivered but another session holds it, so it is not marked Published; it is sent again after its claim window',
        );
        continue;
      }
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
    const status = await withHeldRowWait(deps, (tx) =>
      recordOutboxFailure(tx, {
        id: row.id,
        attempts: row.attempts,
        claimedUntil: row.claimed_until,
        maxAttempts: config.max_attempts,
        retryAt: new Date(deps.clock.now().getTime() + delayMs),
        error: error.message.slice(0, maxErrorLength),
      }),
    );
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
    const released = await withHeldRowWait(deps, (tx) =>
      releaseOutboxClaim(tx, {
        id: row.id,
        attempts: row.attempts,
        claimedUntil: row.claimed_until,
        now: deps.clock.now(),
      }),
    ).catch((err: unknown) => {
      deps.logger.warn({ messageId: row.message_id, err }, 'could not release an outbox claim; it lapses on its own');
      return false;
    });
    if (released) result.released++;
  }
}

/**
 * A failure's record or a hand-back, waiting at most as long as a mark does for a row another session holds
 * (ADR 0131): past it, it fails, and the row's claim lapses on its own. Unbounded, one held row hung the
 * publisher's stop (review 68).
 */
function withHeldRowWait<T>(deps: OutboxPublisherDeps, write: (tx: Prisma.TransactionClient) => Promise<T>) {
  return inSweepTransaction(deps.prisma, deps.config.transaction_timeout_ms, write, {
    lock_timeout: String(Math.min(markLockWaitMs, deps.config.publish_timeout_ms)),
  });
}
