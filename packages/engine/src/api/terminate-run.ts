import { EngineError } from '../errors/engine-error.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { textRules } from '../input/input-limits.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { afterRunSettled, settleRunInTransaction, type SettledRun } from '../runtime/settle-run.ts';
import { findRun } from '../store/find-run.ts';
import { listOpenChildren } from '../store/list-open-children.ts';
import { inOperatorTransaction } from './operator-transaction.ts';

/**
 * Closes a run at once as Terminated: no cleanup window, no compensation. A straggling worker's
 * later write to one of its steps is refused (`write_refused`). Reaches 'propagate' children, each
 * in its own transaction once its parent's committed. Bad input (a run id that is not a uuid, a
 * reason that cannot be stored) is refused before any read.
 */
export async function terminateRun(
  deps: RuntimeDeps,
  runId: string,
  opts: { reason: string },
): Promise<{ terminated: boolean }> {
  assertUuid(runId, 'runId');
  if (typeof opts !== 'object' || opts === null) throw new EngineError('invalid_input', 'options: must be an object');
  assertStorableText(opts.reason, 'reason', textRules(deps.config.limits));
  if (!(await findRun(deps.prisma, runId))) throw new EngineError('run_not_found', `run ${runId} does not exist`);
  const settled = await inOperatorTransaction(deps, (tx) =>
    terminateInTransaction(tx, runId, opts.reason, deps.clock.now()),
  );
  if (settled) await afterTerminate(deps, settled, opts.reason);
  return { terminated: settled !== null };
}

/**
 * Terminates one open run inside the caller's transaction, through the terminal transition (the run
 * row FOR UPDATE). Null when it had already finished. Call {@link afterTerminate} once committed.
 */
export async function terminateInTransaction(
  tx: Prisma.TransactionClient,
  runId: string,
  reason: string,
  now: Date,
): Promise<SettledRun | null> {
  const run = await findRun(tx, runId);
  if (!run) return null;
  return settleRunInTransaction(tx, run, { status: 'Terminated', error: { name: 'Terminated', message: reason } }, now);
}

/**
 * What follows a committed terminate: the run's journal entry and `run.finished` event, then its open
 * 'propagate' children, each terminated in its own transaction (a child's lock is never taken while
 * its parent's is held: a finishing child locks itself, then its parent).
 */
export async function afterTerminate(deps: RuntimeDeps, settled: SettledRun, reason: string): Promise<void> {
  await afterRunSettled(deps, settled);
  const runId = settled.run.id;
  for (const child of await listOpenChildren(deps.prisma, runId)) {
    const childReason = `parent ${runId} was terminated: ${reason}`;
    const done = await inOperatorTransaction(deps, (tx) =>
      terminateInTransaction(tx, child, childReason, deps.clock.now()),
    );
    if (done) await afterTerminate(deps, done, childReason);
  }
}
