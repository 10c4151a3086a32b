import type { Json } from '../../definitions/define-action.ts';
import { appendFlowEvent } from '../../store/append-flow-event.ts';
import { insertCompensation } from '../../store/insert-compensation.ts';
import type { DbCompensationRun } from '../../store/list-compensation-runs.ts';
import { markRunActive } from '../../store/mark-run-active.ts';
import { refusedValue } from '../../input/input-limits.ts';
import { serializeError } from '../flow-error.ts';
import { ReplayConflict, type ReplaySession } from '../replay/replay-session.ts';
import { runClaimableStep } from './run-claimable-step.ts';
import { settleLostClaim } from './settle-lost-claim.ts';

export type CompensateResult =
  | { kind: 'ok' }
  | { kind: 'failed'; error: Json; sequence: number }
  | { kind: 'unfinished'; rows: { sequence: number; name: string; status: string }[] }
  | { kind: 'pending'; waitingFor: string | null; stuckReason?: string };

type RowResult =
  | { kind: 'completed' }
  | { kind: 'errored'; error: Json }
  | { kind: 'unfinished'; status: string }
  | { kind: 'pending'; waitingFor: string | null; stuckReason?: string; running: boolean };

/**
 * One rollback level (one compensate() call): every compensation registered and not yet run,
 * newest first, each at its position (ordinal) in the level. The level's rows are written together
 * when it starts, with `compensation.started` once; each row is then claimed and fenced exactly
 * like an action. A recorded level whose names differ from what the code registers blocks the run.
 */
export async function runCompensateStep(
  session: ReplaySession,
  opts: { parallel: boolean; continueWithError: boolean },
): Promise<CompensateResult> {
  const { deps } = session;
  const level = (session.rollbackLevel += 1);
  const items = session.compensations.splice(0).reverse();
  if (items.length === 0) return { kind: 'ok' };
  session.levelInProgress = { level, items };

  const recorded = session.recordedCompensations.filter((r) => r.rollback_level === level);
  const mismatch = recorded.find((r) => items[r.ordinal]?.name !== r.name);
  if (mismatch || (recorded.length > 0 && recorded.length !== items.length)) {
    session.stop({
      waitingFor: null,
      stuckReason: `replay_blocked: rollback level ${level} is recorded as [${recorded.map((r) => r.name).join(', ')}] but the code now registers [${items.map((i) => i.name).join(', ')}] (flow ${session.run.flow_name} v${session.run.flow_version}); deploy code that matches the record, then kick the run`,
    });
    return { kind: 'pending', waitingFor: null };
  }

  // A level not written yet whose compensation's input JSON cannot hold exactly fails the rollback
  // naming it (ADR 0125), as a compensation that failed would: nothing is written, nothing converted.
  if (recorded.length === 0)
    for (const item of items) {
      const refused = refusedValue(
        deps.config.limits,
        item.input,
        'input',
        `the compensation ${item.name} of step ${item.actionSequence}`,
      );
      if (refused) {
        session.levelInProgress = null;
        // The rollback stopped here, as at a failed compensation: the run's end states what it left undone.
        session.rollbackStopped = true;
        return { kind: 'failed', error: serializeError(refused), sequence: item.actionSequence };
      }
    }

  const now = deps.clock.now();
  const expiresIn = deps.config.monitor.expiration.defaults.compensation;
  const expiresAt = expiresIn === null ? null : new Date(now.getTime() + expiresIn * 1000);
  const { rows, started } = await session.tx(async (tx) => {
    const active = await markRunActive(tx, { runId: session.runId, status: 'Compensating', now });
    if (!active.open) throw new ReplayConflict();
    session.runVersion = active.version;
    const out: DbCompensationRun[] = [];
    let inserted = false;
    for (const [ordinal, item] of items.entries()) {
      const action = deps.registry.actions.get(item.name);
      const row = await insertCompensation(tx, {
        runId: session.runId,
        actionSequence: item.actionSequence,
        level,
        ordinal,
        name: item.name,
        input: item.input,
        maxAttempts: action?.retry.maxAttempts ?? 1,
        reclaimAfterSeconds: item.reclaimAfterSeconds,
        expiresAt,
      });
      inserted ||= row.inserted;
      out.push(row);
    }
    // Only the replay that wrote the level announces it: two replays starting it announce it once.
    if (inserted)
      await appendFlowEvent(tx, {
        runId: session.runId,
        type: 'compensation.started',
        data: { level, steps: items.length },
      });
    return { rows: out, started: inserted };
  });
  if (started) await deps.emit('compensation.started', { runId: session.runId, level, steps: items.length });

  const results: RowResult[] = [];
  if (opts.parallel) {
    results.push(...(await Promise.all(rows.map((row) => runOne(session, row, level, true)))));
    await rereadLost(session, rows, results, level);
  } else {
    for (const row of rows) {
      const r = await runOne(session, row, level, false);
      results.push(r);
      if (r.kind === 'pending' || (r.kind === 'errored' && !opts.continueWithError)) break;
    }
  }
  // A stuck row speaks for the level before a healthy wait does: the operator must see it.
  const pending =
    results.find((r) => r.kind === 'pending' && r.stuckReason) ?? results.find((r) => r.kind === 'pending');
  if (pending?.kind === 'pending')
    return {
      kind: 'pending',
      waitingFor: pending.waitingFor,
      ...(pending.stuckReason ? { stuckReason: pending.stuckReason } : {}),
    };
  session.levelInProgress = null;
  const failedAt = results.findIndex((r) => r.kind === 'errored');
  const failed = results[failedAt];
  // A compensation that failed or did not finish leaves its step undone: the run's end says so (ADR 0124).
  if (failedAt >= 0 || results.some((r) => r.kind === 'unfinished')) session.rollbackStopped = true;
  if (failed?.kind === 'errored' && !opts.continueWithError) {
    return { kind: 'failed', error: failed.error, sequence: rows[failedAt]?.action_sequence ?? 0 };
  }
  const unfinished = results.flatMap((r, i) =>
    r.kind === 'unfinished'
      ? [{ sequence: rows[i]?.action_sequence ?? 0, name: rows[i]?.name ?? '', status: r.status }]
      : [],
  );
  if (unfinished.length > 0) return { kind: 'unfinished', rows: unfinished };
  // Compensated means the undo happened: every compensation of the level completed.
  if (results.every((r) => r.kind === 'completed')) session.compensated = true;
  return { kind: 'ok' };
}

/**
 * A parallel level split by a duplicate delivery: rows another replay held are read again once ours
 * settled. The replay that finishes last sees them all settled and carries on (seed 000's
 * batch_finished_early), so the run never parks with nobody left to wake it.
 */
async function rereadLost(
  session: ReplaySession,
  rows: DbCompensationRun[],
  results: RowResult[],
  level: number,
): Promise<void> {
  if (!results.some((r) => r.kind === 'pending' && r.running)) return;
  // Our own outcomes must be durable before we look at the rows another replay held.
  await session.tx(() => Promise.resolve());
  let late = false;
  for (const [i, r] of results.entries()) {
    const row = rows[i];
    if (r.kind !== 'pending' || !r.running || !row) continue;
    const now = await settleLostClaim(
      session,
      { table: 'compensation_runs', rowId: row.id, sequence: row.action_sequence, name: row.name, waitingFor: null },
      { journal: false },
    );
    if (now.kind === 'pending') continue;
    late = true;
    results[i] = now.kind === 'completed' ? { kind: 'completed' } : classifyErrored(now.error);
  }
  if (late && !results.some((r) => r.kind === 'pending')) {
    await session.deps.journal({
      code: 'batch_finished_early',
      message: `rollback level ${level} finished here after another worker had left it; this worker carries the run on`,
      runId: session.runId,
      details: { level },
    });
  }
}

function classifyErrored(error: Json): RowResult {
  const e = error as { name?: string; message?: string } | null;
  return e?.name === 'StepNotCompleted'
    ? { kind: 'unfinished', status: e.message ?? 'not completed' }
    : { kind: 'errored', error };
}

async function runOne(
  session: ReplaySession,
  row: DbCompensationRun,
  level: number,
  parallel: boolean,
): Promise<RowResult> {
  if (row.status === 'Completed') return { kind: 'completed' };
  if (row.status === 'Errored') return { kind: 'errored', error: row.error as Json };
  if (row.status === 'Expired' || row.status === 'Cancelled') return { kind: 'unfinished', status: row.status };
  const action = session.deps.registry.actions.get(row.name);
  if (!action) {
    return {
      kind: 'pending',
      waitingFor: null,
      stuckReason: `unknown_action: compensation "${row.name}" is not registered on this worker`,
      running: false,
    };
  }
  const seq = row.action_sequence;
  const r = await runClaimableStep(session, {
    table: 'compensation_runs',
    row: { id: row.id },
    sequence: seq,
    name: row.name,
    input: row.input as Json,
    action,
    retry: action.retry,
    level,
    writeAlone: parallel,
  });
  if (r.kind === 'completed') return { kind: 'completed' };
  if (r.kind === 'errored') return r;
  if (r.kind === 'raced') return { kind: 'pending', waitingFor: null, running: false };
  if (!r.lost)
    return {
      kind: 'pending',
      waitingFor: r.waitingFor,
      ...(r.stuckReason ? { stuckReason: r.stuckReason } : {}),
      running: false,
    };
  const lost = await settleLostClaim(
    session,
    { table: 'compensation_runs', rowId: row.id, sequence: seq, name: row.name, waitingFor: r.waitingFor },
    { journal: !r.rejected },
  );
  if (lost.kind === 'completed') return { kind: 'completed' };
  if (lost.kind === 'errored') return classifyErrored(lost.error);
  return lost;
}
