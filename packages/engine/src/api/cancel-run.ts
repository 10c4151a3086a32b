import { commandFailure, EngineError } from '../errors/engine-error.ts';
import { assertSeconds } from '../input/assert-seconds.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { textRules } from '../input/input-limits.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { requestCancel } from '../store/request-cancel.ts';
import { requestDescendantsCancel } from '../store/request-descendants-cancel.ts';
import type { RawDb } from '../db/raw-db.ts';
import { inOperatorTransaction, operatorStatement } from './operator-transaction.ts';

/**
 * Cooperative cancellation: the flow's next step throws FlowError('cancelled') (a waiting step is
 * interrupted), and the flow may compensate within the cleanup window; when the window closes the
 * run is closed as Cancelled. Children started with cancellation 'propagate' are cancelled too.
 */
export async function cancelRun(
  deps: RuntimeDeps,
  runId: string,
  opts: { reason: string; cleanupSeconds?: number },
): Promise<{ requested: boolean }> {
  assertUuid(runId, 'runId');
  if (typeof opts !== 'object' || opts === null) throw new EngineError('invalid_input', 'options: must be an object');
  assertStorableText(opts.reason, 'reason', textRules(deps.config.limits));
  const cleanup =
    opts.cleanupSeconds === undefined
      ? deps.config.runs.cancel_cleanup_seconds
      : assertSeconds(opts.cleanupSeconds, 'cleanupSeconds');
  const now = deps.clock.now();
  const deadline = new Date(now.getTime() + cleanup * 1000);
  const run = await operatorStatement(deps, () =>
    deps.prisma.flowRun.findUnique({ where: { id: runId }, select: { id: true } }),
  );
  if (!run) throw new EngineError('run_not_found', `run ${runId} does not exist`);
  const requested = await inOperatorTransaction(
    deps,
    (tx) => cancelTree(tx, runId, opts.reason, deadline, now),
    `cancel of run ${runId}`,
  ).catch((err: unknown) => {
    throw commandFailure(err);
  });
  return { requested };
}

/**
 * Requests cancellation of a run and, once recorded, of its open descendants started with 'propagate'
 * (each through a parent whose request this records), in four statements whatever the tree's size.
 */
export async function cancelTree(
  tx: RawDb,
  runId: string,
  reason: string,
  deadline: Date,
  now: Date,
): Promise<boolean> {
  const requested = await requestCancel(tx, { runId, reason, deadline, now });
  if (!requested) return false;
  await appendFlowEvent(tx, {
    runId,
    type: 'run.cancel_requested',
    data: { reason, cleanup_until: deadline.toISOString() },
  });
  await enqueueJob(tx, { kind: 'wake-run', runId, availableAt: now });
  await enqueueJob(tx, { kind: 'wake-run', runId, availableAt: deadline });
  // Its open 'propagate' descendants, all of them in one statement whatever the tree's width (ADR 0125).
  await requestDescendantsCancel(tx, { rootId: runId, reason, deadline, now });
  return true;
}
