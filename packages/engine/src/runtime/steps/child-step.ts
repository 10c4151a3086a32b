import type { Json } from '../../definitions/define-action.ts';
import type { RawDb } from '../../db/raw-db.ts';
import { cancelTree } from '../../api/cancel-run.ts';
import { appendFlowEvent } from '../../store/append-flow-event.ts';
import { enqueueJob } from '../../store/enqueue-job.ts';
import { insertFlowRun } from '../../store/insert-flow-run.ts';
import { insertStep } from '../../store/insert-step.ts';
import { settleWaitStep } from '../../store/settle-wait-step.ts';
import { ReplayConflict, type ReplaySession } from '../replay/replay-session.ts';
import { checkHistory } from './check-history.ts';
import { deliverCancel } from './deliver-cancel.ts';
import type { WaitResult } from './wait-step.ts';

/**
 * A child flow at `seq`: the step row and the child run are written in one transaction, so a crash
 * can neither start a child twice nor lose one. The child's finish settles this row and wakes us.
 */
export async function runChildStep(
  session: ReplaySession,
  seq: number,
  spec: {
    flowName: string;
    flowVersion: number;
    input: Json;
    cancellation: 'propagate' | 'abandon';
    /** Asked for before the flow's code saw a cancellation (ADR 0093): a parent's cancellation reaches it at its start. */
    cancelWithParent: boolean;
  },
): Promise<WaitResult> {
  const { deps } = session;
  const verdict = checkHistory(session, seq, 'child', spec.flowName);
  if (verdict.kind === 'blocked') return { kind: 'blocked' };
  if (verdict.kind === 'cancel-delivered') return { kind: 'cancelled' };
  if (verdict.kind === 'deliver-cancel') {
    await deliverCancel(session, seq);
    return { kind: 'cancelled' };
  }
  let row = verdict.kind === 'recorded' ? verdict.row : undefined;
  if (!row) {
    const now = deps.clock.now();
    row = await session.tx(async (tx) => {
      const created = await insertStep(tx, {
        runId: session.runId,
        sequence: seq,
        kind: 'child',
        name: spec.flowName,
        input: spec.input,
        status: 'Waiting',
      });
      if (!created.inserted) return created;
      const childId = await insertFlowRun(tx, {
        flowName: spec.flowName,
        flowVersion: spec.flowVersion,
        input: spec.input,
        businessKey: null,
        tags: session.run.tags,
        expiresAt: null,
        runTimeoutAt: null,
        parent: { runId: session.runId, sequence: seq, cancelPolicy: spec.cancellation },
        now,
      });
      await appendFlowEvent(tx, {
        runId: childId,
        type: 'run.started',
        data: { flow: spec.flowName, version: spec.flowVersion, parent: session.runId },
      });
      await appendFlowEvent(tx, {
        runId: session.runId,
        type: 'child.started',
        sequence: seq,
        rowId: created.id,
        data: { child: childId, flow: spec.flowName },
      });
      await enqueueJob(tx, { kind: 'wake-run', runId: childId, availableAt: now });
      // The run's row is touched, so a one-statement finish waiting for its lock meanwhile finds another
      // version and leaves the end to the transaction, which cancels this child (review 25, ADR 0094).
      // The run's cancellation (or expiry), read under the run's lock, which this transaction holds
      // (review 23, review 24). One this replay has not seen makes it stale: nothing is written, and the
      // cancellation's wake replays the run, which delivers it at this position instead of a child. One
      // it knows of, delivered at a sibling of the same Promise.all, reaches a 'propagate' child asked for
      // before the code could see it: the child is started cancelled. A child the code asked for once it
      // had seen the cancellation (a clean-up child) is left to run.
      const cancel = await touchParent(tx, session.runId);
      if (cancel && !session.cancelRequested) throw new ReplayConflict();
      if (cancel && spec.cancellation === 'propagate' && spec.cancelWithParent)
        await cancelTree(
          tx,
          childId,
          `parent ${session.runId} was cancelled: ${cancel.reason ?? ''}`,
          cancel.deadline ?? now,
          now,
        );
      return created;
    });
    session.recorded.set(seq, row);
    if (row.kind !== 'child' || row.name !== spec.flowName) return runChildStep(session, seq, spec);
  }
  if (row.status === 'Completed') return { kind: 'completed', output: row.output as Json };
  if (row.status === 'Cancelled') return { kind: 'cancelled' };
  if (row.status === 'Errored') {
    // A child cancelled because this run was: the cancellation reaches our code here.
    const childCancelled = (row.error as { status?: string } | null)?.status === 'Cancelled';
    return childCancelled && session.cancelRequested
      ? { kind: 'cancelled' }
      : { kind: 'errored', error: row.error as Json };
  }
  if (session.cancelRequested && !session.cancellationDelivered && spec.cancellation === 'abandon') {
    // The child goes on alone; we stop waiting for it and take the cancellation here.
    const id = row.id;
    const settled = await session.tx((tx) => settleWaitStep(tx, { id, status: 'Cancelled', now: deps.clock.now() }));
    if (settled) return { kind: 'cancelled' };
    session.recorded.set(seq, await deps.prisma.actionRun.findUniqueOrThrow({ where: { id } }));
    return runChildStep(session, seq, spec);
  }
  const child = await deps.prisma.flowRun.findFirst({
    where: { parent_run_id: session.runId, parent_sequence: seq },
    select: { id: true },
  });
  return { kind: 'waiting', waitingFor: `child run ${child?.id ?? '(starting)'} (${spec.flowName})` };
}

/**
 * Writes a new version of the run's row, its values unchanged (no indexed column moves: a HOT update), and
 * reads its cancellation request (an operator's, a parent's, or its expiry's), as the caller's lock finds it.
 */
async function touchParent(tx: RawDb, runId: string): Promise<{ reason: string | null; deadline: Date | null } | null> {
  const [row] = await tx.$queryRaw<{ requested: boolean; reason: string | null; deadline: Date | null }[]>`
    update "sagaflow"."flow_runs" set version = version
     where id = ${runId}::uuid
    returning cancel_requested_at is not null as requested, cancel_reason as reason, cancel_deadline_at as deadline`;
  return row?.requested ? { reason: row.reason, deadline: row.deadline } : null;
}
