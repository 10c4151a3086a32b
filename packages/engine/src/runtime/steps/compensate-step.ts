import type { Json } from '../../definitions/define-action.ts';
import { appendFlowEvent } from '../../store/append-flow-event.ts';
import { insertCompensation } from '../../store/insert-compensation.ts';
import type { DbCompensationRun } from '../../store/list-compensation-runs.ts';
import { markRunActive } from '../../store/mark-run-active.ts';
import type { ReplaySession } from '../replay/replay-session.ts';
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
 * newest first. Its rows are written together when the level starts, with `compensation.started`
 * once; each row is then claimed and fenced exactly like an action.
 */
export async function runCompensateStep(
  session: ReplaySession,
  opts: { parallel: boolean; continueWithError: boolean },
): Promise<CompensateResult> {
  const { deps } = session;
  const level = (session.rollbackLevel += 1);
  const items = session.compensations.splice(0).reverse();
  if (items.length === 0) return { kind: 'ok' };

  const now = deps.clock.now();
  const firstTime = !session.recordedCompensations.some((r) => r.rollback_level === level);
  const rows = await session.tx(async (tx) => {
    await markRunActive(tx, { runId: session.runId, status: 'Compensating', now });
    const out: DbCompensationRun[] = [];
    for (const item of items) {
      const action = deps.registry.actions.get(item.name);
      out.push(
        await insertCompensation(tx, {
          runId: session.runId,
          actionSequence: item.actionSequence,
          level,
          name: item.name,
          input: item.input,
          maxAttempts: action?.retry.maxAttempts ?? 1,
          reclaimAfterSeconds: item.reclaimAfterSeconds,
        }),
      );
    }
    if (firstTime)
      await appendFlowEvent(tx, {
        runId: session.runId,
        type: 'compensation.started',
        data: { level, steps: items.length },
      });
    return out;
  });
  if (firstTime) await deps.emit('compensation.started', { runId: session.runId, level, steps: items.length });

  const results: RowResult[] = [];
  if (opts.parallel) {
    results.push(...(await Promise.all(rows.map((row) => runOne(session, row, level)))));
  } else {
    for (const row of rows) {
      const r = await runOne(session, row, level);
      results.push(r);
      if (r.kind === 'pending' || (r.kind === 'errored' && !opts.continueWithError)) break;
    }
  }
  const pending = results.find((r) => r.kind === 'pending');
  if (pending)
    return {
      kind: 'pending',
      waitingFor: pending.waitingFor,
      ...(pending.stuckReason ? { stuckReason: pending.stuckReason } : {}),
    };
  const failedAt = results.findIndex((r) => r.kind === 'errored');
  const failed = results[failedAt];
  if (failed?.kind === 'errored' && !opts.continueWithError)
    return { kind: 'failed', error: failed.error, sequence: rows[failedAt]?.action_sequence ?? 0 };
  const unfinished = results.flatMap((r, i) =>
    r.kind === 'unfinished'
      ? [{ sequence: rows[i]?.action_sequence ?? 0, name: rows[i]?.name ?? '', status: r.status }]
      : [],
  );
  if (unfinished.length > 0) return { kind: 'unfinished', rows: unfinished };
  session.compensated = true;
  return { kind: 'ok' };
}

async function runOne(session: ReplaySession, row: DbCompensationRun, level: number): Promise<RowResult> {
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
    rowId: row.id,
    sequence: seq,
    name: row.name,
    input: row.input as Json,
    action,
    retry: action.retry,
    level,
  });
  if (r.kind === 'completed') return { kind: 'completed' };
  if (r.kind === 'errored') return r;
  if (!r.lost)
    return {
      kind: 'pending',
      waitingFor: r.waitingFor,
      ...(r.stuckReason ? { stuckReason: r.stuckReason } : {}),
      running: false,
    };
  const lost = await settleLostClaim(session, {
    table: 'compensation_runs',
    rowId: row.id,
    sequence: seq,
    name: row.name,
    waitingFor: r.waitingFor,
  });
  if (lost.kind === 'completed') return { kind: 'completed' };
  if (lost.kind === 'errored') {
    const e = lost.error as { name?: string; message?: string } | null;
    return e?.name === 'StepNotCompleted'
      ? { kind: 'unfinished', status: e.message ?? 'not completed' }
      : { kind: 'errored', error: lost.error };
  }
  return lost;
}
