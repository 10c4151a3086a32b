import { setTimeout as sleep } from 'node:timers/promises';
import { closedByHostError } from '../db/closed-by-host.ts';
import { storeRetryDelay } from '../process/store-retry.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { inRunTransaction } from './in-run-transaction.ts';
import type { RuntimeDeps } from './runtime-deps.ts';
import { announceOutcomes, writePendingOutcomes, type PendingOutcome } from './steps/pending-outcome.ts';

/**
 * One attempt at the outcomes a worker holds: each written on its own fence, with a wake for the
 * run so a fresh replay carries it on now instead of after the failed job's lease. Throws what the
 * database threw.
 */
async function writeOnce(deps: RuntimeDeps, runId: string, outcomes: PendingOutcome[]): Promise<void> {
  const fates = await inRunTransaction(deps, async (tx) => {
    const now = deps.clock.now();
    const written = await writePendingOutcomes(tx, outcomes, now);
    await enqueueJob(tx, { kind: 'wake-run', runId, availableAt: now });
    return written;
  });
  await announceOutcomes(deps, fates);
}

/**
 * Writes the outcomes a replay held when the database failed it, trying again with backoff within
 * `worker.outcome_retry` (a short outage must not leave a step Running whose side effect ran).
 * 'hold' once the budget is spent: the caller then hands them to the engine's HeldOutcomes. 'done'
 * when written, or when the host closed the database: then they are logged once and let go
 * ({@link letGoOnClose}). The wait between tries keeps no process alive (ADR 0129): a host that has
 * nothing else to do exits, and the steps are left as a dead worker's are.
 */
export async function writeHeldOutcomes(
  deps: RuntimeDeps,
  runId: string,
  outcomes: PendingOutcome[],
): Promise<'done' | 'hold'> {
  const policy = deps.config.worker.outcome_retry;
  const steps = outcomes.map((o) => o.sequence);
  for (let attempt = 1; ; attempt++) {
    try {
      await writeOnce(deps, runId, outcomes);
      if (attempt > 1) deps.logger.info({ runId, attempt, steps }, 'held step outcomes written');
      return 'done';
    } catch (err) {
      if (closedByHostError(err, deps.driver)) {
        letGoOnClose(deps, runId, outcomes, err);
        return 'done';
      }
      if (attempt >= policy.max_attempts) {
        deps.logger.error(
          { err, runId, steps, outcomes: describeHeld(outcomes) },
          'step outcomes could not be written; this worker keeps them in memory and writes them as soon as the database answers (check the database connection)',
        );
        return 'hold';
      }
      const delayMs = storeRetryDelay(
        { maxAttempts: policy.max_attempts, baseDelayMs: policy.base_delay_ms, maxDelayMs: policy.max_delay_ms },
        attempt,
      );
      deps.logger.warn({ err, runId, steps, attempt, delayMs }, 'writing step outcomes failed; trying again');
      await sleep(delayMs, undefined, { ref: false });
    }
  }
}

/**
 * The host closed the database while this worker held outcomes (the README's shutdown: stopWorkers
 * did not drain, then db.close()): no write through the handle can succeed, so they are not tried
 * again. One warning with their payload; their steps stay Running as the record says, under a worker
 * that is gone once its beats stop, and run again as their reclaim policy says (ADR 0010, 0129):
 * never twice without a record of why.
 */
function letGoOnClose(deps: RuntimeDeps, runId: string, outcomes: PendingOutcome[], err: unknown): void {
  const steps = outcomes.map((o) => `${o.sequence} (${o.name})`);
  const which = steps.length === 1 ? `step ${steps[0]} stays` : `steps ${steps.join(', ')} stay`;
  deps.logger.warn(
    { err, runId, steps: outcomes.map((o) => o.sequence), outcomes: describeHeld(outcomes) },
    `the database was closed by its host before this worker wrote what it held; ${which} Running as recorded and runs again as the reclaim policy says (reclaim off, the default: once this worker counts as gone, by engine.reclaimStep, kick or the doctor; on: after the reclaim deadline). The outcome is not tried again`,
  );
}

/** What a log line carries of held outcomes: enough to write them by hand if the process dies. */
export function describeHeld(outcomes: PendingOutcome[]): object[] {
  return outcomes.map((o) => ({
    table: o.table,
    rowId: o.rowId,
    sequence: o.sequence,
    name: o.name,
    attempts: o.attempts,
    ...(o.failure ? { failure: o.failure } : { output: o.output }),
  }));
}

/**
 * Outcomes whose bounded retry ran out while the database stayed away. The worker pool tries them
 * again every poll until they are written (recorded, or rejected and journaled): while this process
 * lives, a result it holds is not dropped. If it dies holding them, its heartbeat stops and the
 * step's owner shows as gone (stuck reason, engine.reclaimStep).
 */
export class HeldOutcomes {
  private readonly held = new Map<string, PendingOutcome[]>();

  constructor(private readonly deps: () => RuntimeDeps) {}

  get size(): number {
    return this.held.size;
  }

  hold(runId: string, outcomes: PendingOutcome[]): void {
    this.held.set(runId, [...(this.held.get(runId) ?? []), ...outcomes]);
  }

  /**
   * One attempt for each run's held outcomes; those written (recorded, or rejected and journaled)
   * leave the backlog. Only those: an outcome of the same run handed over while the write was out
   * (another step's retry budget ran out meanwhile) stays for the next attempt (review 27).
   */
  async retry(): Promise<void> {
    for (const [runId, outcomes] of [...this.held]) {
      let written = true;
      try {
        await writeOnce(this.deps(), runId, outcomes);
      } catch (err) {
        // The database is still away: the next poll tries again. Closed by the host: never.
        if (!closedByHostError(err, this.deps().driver)) return;
        letGoOnClose(this.deps(), runId, outcomes, err);
        written = false;
      }
      const left = (this.held.get(runId) ?? []).filter((o) => !outcomes.includes(o));
      if (left.length > 0) this.held.set(runId, left);
      else this.held.delete(runId);
      if (written)
        this.deps().logger.info({ runId, steps: outcomes.map((o) => o.sequence) }, 'held step outcomes written');
    }
  }

  /**
   * The pool is stopping: one last attempt, then whatever is still held is logged at error level
   * with its payload (the only copy left). Its steps stay Running under a worker that is gone: the
   * monitor gives the run a stuck reason and engine.reclaimStep runs them again.
   */
  async release(): Promise<void> {
    await this.retry();
    for (const [runId, outcomes] of this.held)
      this.deps().logger.error(
        { runId, outcomes: describeHeld(outcomes) },
        'this worker stopped holding step outcomes it could not write; their steps will show as held by a worker that is gone: reclaim them (engine.reclaimStep) to run them again',
      );
    this.held.clear();
  }
}
