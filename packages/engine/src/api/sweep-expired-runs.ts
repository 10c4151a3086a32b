import type { Prisma } from '../generated/prisma/client.ts';
import { planRollback, type RollbackPlan } from '../runtime/plan-rollback.ts';
import { serializeError } from '../runtime/flow-error.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { expireRunningSteps } from '../store/expire-running-steps.ts';
import { findOverdueRuns, type OverdueRun } from '../store/find-overdue-runs.ts';
import { findRun } from '../store/find-run.ts';
import { holdOffExpiry } from '../store/hold-off-expiry.ts';
import { markRunExpired } from '../store/mark-run-expired.ts';
import { readRollbackBasis } from '../store/read-rollback-basis.ts';
import { HeldRunWaits, onMonitoredRun, RunSweepFailed } from '../sweeps/on-monitored-run.ts';
import { codesOf } from '../process/store-retry.ts';
import { requestDescendantsCancel } from '../store/request-descendants-cancel.ts';

export interface ExpiredRunsSweep {
  /** Runs expired by this sweep: their rollback was planned and started. */
  expired: string[];
  /** Runs whose rollback could not be planned, each held off (expiry_failed). */
  failed: { runId: string; attempts: number; retryAt: string }[];
}

/** A pass as the monitor loop sees it: `more` = overdue runs were left (time budget spent, or lease lost). */
export type ExpiredRunsPass = ExpiredRunsSweep & { more: boolean };

/**
 * One pass of the expiration monitor over runs past their business deadline (seed 000). For each
 * candidate the sweep first replays the run without writing, to plan its rollback; if that throws,
 * the run is journaled expiry_failed, counted and held off, and the sweep moves on to the next.
 * Otherwise one transaction marks the run Expired (conditionally), expires its Running actions,
 * records the plan and wakes the run, whose replay delivers FlowError('expired') at its live step
 * and compensates within the cleanup window. Each run needs its own replay, so this sweep goes run by
 * run; it pages by keyset (each run is looked at once per pass) with no fixed cap on pages, until
 * none are left or the pass has used `sweeps.pass_budget_ms` (ADR 0026).
 */
export async function sweepExpiredRuns(
  deps: RuntimeDeps,
  opts: {
    pageSize?: number;
    maxPages?: number;
    /** Renews the sweeper's lease; false (lost) stops the sweep before the next run. */
    keep?: () => Promise<boolean>;
  } = {},
): Promise<ExpiredRunsPass> {
  const cfg = deps.config.monitor.expiration;
  const pageSize = opts.pageSize ?? cfg.page_size;
  const pass = deps.progress.start('expired_runs', {
    budgetMs: deps.config.sweeps.pass_budget_ms,
    logger: deps.logger,
  });
  const out: ExpiredRunsPass = { expired: [], failed: [], more: false };
  // A pass goes on from where the last one stopped on its budget, then from the stalest deadline up to
  // there: runs it cannot get through (held, slow to plan) must not take every pass's budget before the
  // runs behind them are reached (review 62).
  const startedAfter = resumeAfter.get(deps) ?? null;
  let after: OverdueRun | null = startedAfter;
  let upTo: OverdueRun | null = null;
  const stop = () => {
    resumeAfter.set(deps, after);
    out.more = true;
    pass.end(null);
    return out;
  };
  const waits = HeldRunWaits.of(deps);
  let roundDone = false;
  for (let page = 0; page < (opts.maxPages ?? Infinity); page++) {
    const candidates = await findOverdueRuns(deps.prisma, { now: deps.clock.now(), limit: pageSize, after, upTo });
    for (const candidate of candidates) {
      if (pass.outOfTime() || (opts.keep && !(await opts.keep()))) return stop();
      after = candidate;
      const runId = candidate.id;
      // The plan is made outside the expiry's transaction (a replay may take a while) from the record as
      // read just before; under the run's lock the record is read again, and a run that moved on meanwhile
      // is planned again (ADR 0088, as a repair's rollback is: ADR 0085).
      for (let attempt = 1; ; attempt++) {
        const run = await findRun(deps.prisma, runId);
        if (!run) break;
        const basis = await readRollbackBasis(deps.prisma, runId);
        const plan = await planRollback(deps, run, { timeoutMs: cfg.plan_timeout_ms }).catch((err: unknown) => ({
          ok: false as const,
          error: serializeError(err),
        }));
        // The plan may have taken a while: a sweeper that lost its lease meanwhile writes nothing more.
        if (opts.keep && !(await opts.keep())) return stop();
        if (attempt === 1) pass.add(1);
        const now = deps.clock.now();
        if (!plan.ok) {
          await holdOff(deps, run, { failed: 'plan', error: plan.error }, now, out, waits);
          break;
        }
        const deadline = run.expires_at?.toISOString() ?? '?';
        const cleanupUntil = new Date(now.getTime() + deps.config.runs.cancel_cleanup_seconds * 1000);
        const reason = `its business deadline passed at ${deadline}`;
        const expired = await onMonitoredRun(
          deps,
          'expiry',
          runId,
          'no key update',
          async (tx) => {
            if ((await readRollbackBasis(tx, runId)) !== basis) return 'moved' as const;
            return startExpiryInTransaction(tx, { runId, reason, deadline, plan, cleanupUntil, now });
          },
          waits,
        );
        // Held by another session: this pass goes on to the next overdue run, the next pass tries it again.
        if (expired === 'held' || expired === 'closed') break;
        // The expiry itself failed (it outlasted its limits, a deadlock): counted, journaled and held off
        // like a plan that failed, so the run says why it is not expired and the sweep goes on (review 62).
        if (expired instanceof RunSweepFailed) {
          await holdOff(deps, run, { failed: 'expiry', error: expiryFailure(deps, expired) }, now, out, waits);
          break;
        }
        if (expired === 'moved') {
          if (attempt < planTries) continue;
          // Still moving: the run stays overdue, and the next pass plans it again.
          deps.logger.info(
            { runId, tries: attempt },
            'an overdue run moved on while each of its rollback plans was made; the next pass tries again',
          );
          break;
        }
        if (expired) {
          out.expired.push(runId);
          await deps.emit('run.expired', { runId, flowName: run.flow_name, compensations: plan.compensations });
        }
        break;
      }
    }
    if (candidates.length < pageSize) {
      // The end of the overdue runs: a pass that began part-way goes round once, up to where it began.
      if (startedAfter === null || upTo !== null) {
        roundDone = true;
        break;
      }
      upTo = startedAfter;
      after = null;
    }
  }
  // A sweep that stopped at its page cap (`maxPages`) keeps its place like one out of time (review 63).
  if (roundDone) resumeAfter.delete(deps);
  else resumeAfter.set(deps, after);
  pass.end(0);
  return out;
}

/**
 * Where the expiry sweep of each engine stopped short of a whole round (its budget, its lease, its page
 * cap), for its next sweep, the monitor's or an operator's, to go on from.
 */
const resumeAfter = new WeakMap<RuntimeDeps, OverdueRun | null>();

/** How many times the sweep plans one run's rollback while the run keeps moving on under it. */
const planTries = 3;

/** What an expiry's transaction that failed says, with what to do when it ran out of its time limit. */
function expiryFailure(deps: RuntimeDeps, failure: RunSweepFailed): { message: string } {
  const timedOut =
    codesOf(failure.error).some((c) => c === '57014' || c === 'P2028') ||
    /timeout|expired transaction/i.test(failure.message);
  const limit = deps.config.sweeps.transaction_timeout_ms;
  return {
    message: timedOut
      ? `the expiry did not finish within sweeps.transaction_timeout_ms (${limit} ms): ${failure.message}. A run with ` +
        'very many open children or steps can take longer: raise the limit, or terminate the run'
      : failure.message,
  };
}

/**
 * A run whose rollback could not be planned, or whose expiry's transaction failed: journaled
 * expiry_failed, counted and held off.
 */
async function holdOff(
  deps: RuntimeDeps,
  run: { id: string; flow_name: string },
  { failed, error }: { failed: 'plan' | 'expiry'; error: { message: string } },
  now: Date,
  out: ExpiredRunsSweep,
  waits: HeldRunWaits,
): Promise<void> {
  const cfg = deps.config.monitor.expiration;
  const runId = run.id;
  const held = await onMonitoredRun(
    deps,
    'expiry hold-off',
    runId,
    'no key update',
    (tx) =>
      holdOffExpiry(tx, {
        runId,
        baseSeconds: cfg.backoff.base_seconds,
        maxSeconds: cfg.backoff.max_seconds,
        now,
        error: error.message,
        failed,
      }),
    waits,
  );
  if (!held || held === 'held' || held === 'closed' || held instanceof RunSweepFailed) return;
  out.failed.push({ runId, attempts: held.attempts, retryAt: held.retryAt.toISOString() });
  await deps.journal({
    code: 'expiry_failed',
    message: `could not ${failed === 'plan' ? 'plan the rollback of' : 'expire'} overdue run ${runId} (${run.flow_name}): ${error.message}; attempt ${held.attempts}, held off until ${held.retryAt.toISOString()}`,
    runId,
    name: run.flow_name,
    site: 'monitor.run',
    details: { error, attempts: held.attempts, retry_at: held.retryAt.toISOString() },
  });
}

/**
 * Expires an overdue run inside the caller's transaction, conditionally (markRunExpired): the run is
 * marked Expired-in-cleanup, its Running actions expired, its open children cancelled, and it is
 * woken now and when the cleanup window closes; its replay then compensates what the plan lists.
 * Returns false, writing nothing, when the run is not open, not overdue, or already cancelled.
 */
export async function startExpiryInTransaction(
  tx: Prisma.TransactionClient,
  args: {
    runId: string;
    reason: string;
    /** The deadline that passed, as the history states it. */
    deadline: string;
    plan: RollbackPlan & { ok: true };
    cleanupUntil: Date;
    now: Date;
  },
): Promise<boolean> {
  const { runId, reason, plan, cleanupUntil, now } = args;
  if (!(await markRunExpired(tx, { runId, reason, cleanupUntil, now }))) return false;
  await appendFlowEvent(tx, {
    runId,
    type: 'run.expiry_started',
    data: {
      expires_at: args.deadline,
      cleanup_until: cleanupUntil.toISOString(),
      position: plan.position,
      compensations: plan.compensations.map((c) => c.name),
    },
  });
  for (const step of await expireRunningSteps(tx, { runId, now }))
    await appendFlowEvent(tx, {
      runId,
      type: 'action.expired',
      sequence: step.sequence,
      rowId: step.id,
      data: { name: step.name, cause: 'run_expired' },
    });
  // Its open 'propagate' tree, however wide, in one statement (ADR 0136): a child at a time, five
  // statements each, outlasted the sweep's transaction at about 9,000 children (review 62).
  await requestDescendantsCancel(tx, {
    rootId: runId,
    reason,
    childReason: `parent ${runId} expired: ${reason}`,
    deadline: cleanupUntil,
    now,
  });
  await enqueueJob(tx, { kind: 'wake-run', runId, availableAt: now });
  await enqueueJob(tx, { kind: 'wake-run', runId, availableAt: cleanupUntil });
  return true;
}
