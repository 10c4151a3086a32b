import { EngineError } from '../errors/engine-error.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { textRules } from '../input/input-limits.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { afterRunSettled, settleRunInTransaction, type SettledRun } from '../runtime/settle-run.ts';
import { findRun } from '../store/find-run.ts';
import { listOpenChildren } from '../store/list-open-children.ts';

/**
 * Closes a run at once as Terminated: no cleanup window, no compensation. A straggling worker's
 * later write to one of its steps is refused (`write_refused`). Reaches 'propagate' children, in
 * the same transaction. Bad input (a run id that is not a uuid, a reason that cannot be stored) is
 * refused before any read.
 */
export async function terminateRun(
  deps: RuntimeDeps,
  runId: string,
  opts: { reason: string },
): Promise<{ terminated: boolean }> {
  assertUuid(runId, 'runId');
  if (typeof opts !== 'object' || opts === null) throw new EngineError('invalid_input', 'options: must be an object');
  assertStorableText(opts.reason, 'reason', textRules(deps.config.limits));
  const now = deps.clock.now();
  const settled = await deps.prisma.$transaction(async (tx) => {
    if (!(await findRun(tx, runId))) throw new EngineError('run_not_found', `run ${runId} does not exist`);
    return terminateInTransaction(tx, runId, opts.reason, now);
  });
  await afterTerminate(deps, settled);
  return { terminated: settled.length > 0 };
}

/**
 * Terminates an open run and its open 'propagate' children inside the caller's transaction, each
 * through the terminal transition (the run row FOR UPDATE). Returns the runs it finished, the run
 * first; none when the run had already finished. Call {@link afterTerminate} once committed.
 */
export async function terminateInTransaction(
  tx: Prisma.TransactionClient,
  runId: string,
  reason: string,
  now: Date,
): Promise<SettledRun[]> {
  const run = await findRun(tx, runId);
  if (!run) return [];
  const settled = await settleRunInTransaction(
    tx,
    run,
    { status: 'Terminated', error: { name: 'Terminated', message: reason } },
    now,
  );
  if (!settled) return [];
  const out = [settled];
  for (const child of await listOpenChildren(tx, runId))
    out.push(...(await terminateInTransaction(tx, child, `parent ${runId} was terminated: ${reason}`, now)));
  return out;
}

/** What follows a committed terminate: each finished run's journal entry and `run.finished` event. */
export async function afterTerminate(deps: RuntimeDeps, settled: readonly SettledRun[]): Promise<void> {
  for (const s of settled) await afterRunSettled(deps, s);
}
