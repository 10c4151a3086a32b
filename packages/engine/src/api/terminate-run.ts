import { EngineError } from '../errors/engine-error.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { textRules } from '../input/input-limits.ts';
import { leftUndoneJson, readLeftUndone } from '../runtime/find-left-undone.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { afterRunSettled, settleRunInTransaction, type SettledRun } from '../runtime/settle-run.ts';
import { findRun } from '../store/find-run.ts';
import { listOpenChildren } from '../store/list-open-children.ts';
import { lockOpenTree } from '../store/lock-open-tree.ts';
import { inOperatorTransaction, operatorStatement } from './operator-transaction.ts';

/**
 * Closes a run at once as Terminated: no cleanup window, no compensation. A straggling worker's
 * later write to one of its steps is refused (`write_refused`). The run states what it left undone
 * and which steps were in flight (`left_undone` on its error and its `run.terminated` event, ADR 0091). Its open 'propagate' children, and
 * theirs, are terminated in the same transaction (ADR 0089). Bad input (a run id that is not a uuid,
 * a reason that cannot be stored) is refused before any read.
 */
export async function terminateRun(
  deps: RuntimeDeps,
  runId: string,
  opts: { reason: string },
): Promise<{ terminated: boolean }> {
  assertUuid(runId, 'runId');
  if (typeof opts !== 'object' || opts === null) throw new EngineError('invalid_input', 'options: must be an object');
  assertStorableText(opts.reason, 'reason', textRules(deps.config.limits));
  if (!(await operatorStatement(deps, () => findRun(deps.prisma, runId))))
    throw new EngineError('run_not_found', `run ${runId} does not exist`);
  const settled = await inOperatorTransaction(deps, async (tx) => {
    await lockOpenTree(tx, runId);
    return terminateInTransaction(tx, runId, opts.reason, deps.clock.now());
  });
  await afterTerminate(deps, settled);
  return { terminated: settled.length > 0 };
}

/**
 * Terminates one open run inside the caller's transaction, through the terminal transition (the run
 * row FOR UPDATE), then its open 'propagate' children, depth first, in the same transaction: what
 * the operator was shown as one command commits as one, and a process that dies after the commit
 * leaves no child running under a Terminated parent (ADR 0089). Empty when the run had already
 * finished; else the run first, then each child it reached. Call {@link afterTerminate} once committed.
 *
 * The caller locks the tree first ({@link lockOpenTree}: the deepest runs first, the root last), so
 * a child finishing meanwhile, which locks itself and then its parent, is waited for, not met in a
 * cycle, and once the tree is held nothing is added to it or leaves it before the commit. Each child
 * is also listed after its parent's row is locked, so the tree ended is the tree held. A child's
 * `write_refused` on its parent (the parent had finished first) is not journaled here: one command
 * ended both.
 */
export async function terminateInTransaction(
  tx: Prisma.TransactionClient,
  runId: string,
  reason: string,
  now: Date,
): Promise<SettledRun[]> {
  const run = await findRun(tx, runId);
  if (!run) return [];
  // What the run leaves undone, read from its rows under the tree's locks: what it had when it ended (ADR 0091).
  const leftUndone = leftUndoneJson(await readLeftUndone(tx, runId));
  const settled = await settleRunInTransaction(
    tx,
    run,
    {
      status: 'Terminated',
      error: { name: 'Terminated', message: reason, left_undone: leftUndone },
      details: { left_undone: leftUndone },
    },
    now,
  );
  if (!settled) return [];
  const tree = [settled];
  for (const child of await listOpenChildren(tx, runId)) {
    const [own, ...below] = await terminateInTransaction(tx, child, `parent ${runId} was terminated: ${reason}`, now);
    if (own) tree.push({ ...own, refusedParent: null }, ...below);
  }
  return tree;
}

/**
 * What follows a committed terminate, for the run and each child it reached, in that order: the
 * journal entry of a refused parent step and the `run.finished` event.
 */
export async function afterTerminate(deps: RuntimeDeps, settled: readonly SettledRun[]): Promise<void> {
  for (const one of settled) await afterRunSettled(deps, one);
}
