import { assertInteger } from '../input/assert-integer.ts';
import { claimDueProcessTimeout, type DbDueTimeout } from '../store/claim-due-process-timeout.ts';
import { countDueProcessTimeouts } from '../store/count-due-process-timeouts.ts';
import { markProcessTimeoutDelivered } from '../store/mark-process-timeout-delivered.ts';
import { markProcessTimeoutFailed } from '../store/mark-process-timeout-failed.ts';
import { noteHeldTimeouts } from '../store/record-held-timeouts.ts';
import { deliverInTransaction } from './deliver-in-transaction.ts';
import { inTransaction, type ProcessDeps } from './process-deps.ts';
import { errorMessage } from './record-failure.ts';
import { withStoreRetry } from './store-retry.ts';

/**
 * One pass of the timeout scheduler: claims due timeouts one at a time (SKIP LOCKED) and delivers
 * each through the same transaction as any message, its row id as the message id, marking it
 * Delivered in that transaction. A stale timeout becomes a recorded no-op. A timeout whose delivery
 * throws records nothing in the instance's failure record (seed 002); it stays Pending and is tried
 * again later, each delay twice the last up to a cap (ADR 0127), and shows as the instance's
 * `failingTimeout`; its first failure journals a `process_timeout_failing` anomaly.
 * Timers of a quarantined instance stay armed (Pending) and are noted once as `skipped_quarantined`.
 * No fixed cap per pass: it claims until nothing is due or the pass has run `sweeps.pass_budget_ms`
 * (ADR 0026); `more` then says due timeouts are left, so the loop goes on at once.
 */
export async function sweepProcessTimeouts(
  deps: ProcessDeps,
  opts: { limit?: number } = {},
): Promise<{ delivered: number; failed: number; more: boolean }> {
  const limit =
    opts.limit === undefined || opts.limit === Infinity
      ? Infinity
      : assertInteger(opts.limit, 'limit', 1, Number.MAX_SAFE_INTEGER);
  const pass = deps.progress.start('process_timeouts', { budgetMs: deps.sweepBudgetMs, logger: deps.logger });
  const processNames = [...deps.definitions.keys()];
  let delivered = 0;
  let failed = 0;
  // A quarantined instance's due timers are not claimed; each is noted once in its history.
  await withStoreRetry(
    deps.storeRetry,
    () =>
      noteHeldTimeouts(deps.prisma, { now: deps.clock.now(), processNames }, { timeoutMs: deps.transactionTimeoutMs }),
    deps.sleep,
  );
  let drained = false;
  while (delivered + failed < limit && !pass.outOfTime()) {
    let claimed: DbDueTimeout | null = null;
    try {
      const done = await withStoreRetry(
        deps.storeRetry,
        () =>
          inTransaction(deps, async (tx) => {
            claimed = null;
            const due = await claimDueProcessTimeout(tx, { now: deps.clock.now(), processNames });
            if (!due) return false;
            claimed = due;
            const def = deps.definitions.get(due.process_name);
            if (!def) return false;
            const payload = { ...(due.payload as object), expectedState: due.expected_state };
            const r = await deliverInTransaction(
              tx,
              deps,
              def,
              { id: due.id, type: due.name, payload, expectedState: due.expected_state, armedVisit: due.armed_visit },
              { id: due.instance_id },
            );
            // Quarantined after the claim: leave it armed, as a quarantined instance's timers are.
            if (r.outcome !== 'skipped_quarantined')
              await markProcessTimeoutDelivered(tx, { id: due.id, now: deps.clock.now() });
            return true;
          }),
        deps.sleep,
      );
      if (!done) {
        drained = true;
        break;
      }
      delivered++;
      pass.add(1);
    } catch (err) {
      const due = claimed as DbDueTimeout | null;
      if (!due) throw err;
      failed++;
      pass.add(1);
      deps.logger.warn(
        { err, timeout: due.id, name: due.name },
        'process timeout delivery failed; it will be tried again',
      );
      const now = deps.clock.now();
      await markProcessTimeoutFailed(deps.prisma, {
        id: due.id,
        error: errorMessage(err),
        retryAt: new Date(now.getTime() + timeoutRetryDelayMs(deps, due.attempts)),
        now,
      }).catch((markErr: unknown) => deps.logger.error({ err: markErr }, 'could not mark a failed timeout'));
    }
  }
  const left = drained ? 0 : await countDueProcessTimeouts(deps.prisma, { now: deps.clock.now(), processNames });
  pass.end(left);
  return { delivered, failed, more: left > 0 };
}

/**
 * How long after its `attempts`+1-th failure a timeout is tried again: `timeout_retry_seconds`
 * doubled per earlier failure, capped at `timeout_retry_max_seconds` (ADR 0127).
 */
export function timeoutRetryDelayMs(deps: Pick<ProcessDeps, 'timeoutRetryMs' | 'timeoutRetryMaxMs'>, attempts: number) {
  return Math.min(deps.timeoutRetryMs * 2 ** Math.min(Math.max(attempts, 0), 40), deps.timeoutRetryMaxMs);
}
