import { commandFailure, EngineError } from '../errors/engine-error.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { textRules } from '../input/input-limits.ts';
import { leftUndoneJson, readLeftUndone } from '../runtime/find-left-undone.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { afterRunSettled, settleRunInTransaction, type SettledRun } from '../runtime/settle-run.ts';
import { findRun } from '../store/find-run.ts';
import { listOpenChildren } from '../store/list-open-children.ts';
import { listTreeToTerminate, lockOpenRuns, lockOpenTree } from '../store/lock-open-tree.ts';
import { lockOpenRun } from '../store/lock-open-run.ts';
import { requestDescendantsCancel } from '../store/request-descendants-cancel.ts';
import { inOperatorTransaction, operatorStatement } from './operator-transaction.ts';

/**
 * Closes a run at once as Terminated: no cleanup window, no compensation. A straggling worker's
 * later write to one of its steps is refused (`write_refused`). The run states what it left undone
 * and which steps were in flight (`left_undone` on its error and its `run.terminated` event, ADR 0091). Its open 'propagate' children, and
 * theirs, are terminated after it, a bounded batch per transaction (ADR 0125; one transaction, ADR 0089, before). Bad input (a run id that is not a uuid,
 * a reason that cannot be stored) is refused before any read.
 */
export function terminateRun(
  deps: RuntimeDeps,
  runId: string,
  opts: { reason: string },
): Promise<{ terminated: boolean }> {
  // A database failure reaches the caller as an EngineError without the driver's source excerpt (review 49).
  return terminateTree(deps, runId, opts).catch((err: unknown) => {
    throw commandFailure(err);
  });
}

async function terminateTree(
  deps: RuntimeDeps,
  runId: string,
  opts: { reason: string },
): Promise<{ terminated: boolean }> {
  assertUuid(runId, 'runId');
  if (typeof opts !== 'object' || opts === null) throw new EngineError('invalid_input', 'options: must be an object');
  assertStorableText(opts.reason, 'reason', textRules(deps.config.limits));
  if (!(await operatorStatement(deps, () => findRun(deps.prisma, runId))))
    throw new EngineError('run_not_found', `run ${runId} does not exist`);
  // The run itself first, in a transaction of its own: once it commits the command is recorded, the
  // run is Terminated and no child can be added under it (ADR 0125).
  const root = await inOperatorTransaction(deps, async (tx) => {
    // The tree locked deepest first, the root last (ADR 0089): a finishing child is waited for, never
    // met in a cycle, and once held nothing is added to the tree or leaves it before the fence commits.
    await lockOpenTree(tx, runId);
    if (!(await lockOpenRun(tx, runId, 'update'))) return null;
    const now = deps.clock.now();
    const settled = await terminateOne(tx, runId, opts.reason, now);
    // Its whole open tree fenced in the same commit, in one statement: each descendant's cleanup window
    // closed now, so none runs another line of its code before its batch below terminates it.
    if (settled)
      await requestDescendantsCancel(tx, { rootId: runId, reason: opts.reason, deadline: now, now, terminated: true });
    return settled;
  });
  if (root) await afterRunSettled(deps, root);
  // Then its open 'propagate' descendants, parents first, a bounded batch per transaction, however
  // wide the tree: one transaction for the whole tree outlasted Prisma's 5 s with 2,000 children
  // (review 49). The walk also goes under runs already Terminated, so a terminate that stopped between
  // batches (a crash, a lost connection) is finished by issuing it again.
  let children = 0;
  for (;;) {
    const batch = await inOperatorTransaction(deps, async (tx) => {
      const next = await listTreeToTerminate(tx, runId, opts.reason, terminateBatch);
      if (next.length === 0) return null;
      const held = await lockOpenRuns(tx, next);
      const now = deps.clock.now();
      const settled: SettledRun[] = [];
      for (const child of next) {
        if (!held.has(child.id)) continue;
        const own = await terminateOne(tx, child.id, child.reason, now);
        // Its parent ended first, by this command: its refusal is not journaled (ADR 0089).
        if (own) settled.push({ ...own, refusedParent: null });
      }
      return settled;
    });
    if (batch === null) break;
    children += batch.length;
    await afterTerminate(deps, batch);
  }
  return { terminated: root !== null || children > 0 };
}

/** Runs a terminate ends per transaction below its root (ADR 0125): each takes about eight statements. */
const terminateBatch = 100;

/** Terminates one open run, its row already locked, in the caller's transaction; null when it had finished. */
async function terminateOne(
  tx: Prisma.TransactionClient,
  runId: string,
  reason: string,
  now: Date,
): Promise<SettledRun | null> {
  const run = await findRun(tx, runId);
  if (!run) return null;
  // What the run leaves undone, read from its rows under its lock: what it had when it ended (ADR 0091).
  const leftUndone = leftUndoneJson(await readLeftUndone(tx, runId));
  return settleRunInTransaction(
    tx,
    run,
    {
      status: 'Terminated',
      error: { name: 'Terminated', message: reason, left_undone: leftUndone },
      details: { left_undone: leftUndone },
    },
    now,
  );
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
 * ended both. A repair's terminate (run-repairs.ts) ends its tree so, in its one transaction.
 */
export async function terminateInTransaction(
  tx: Prisma.TransactionClient,
  runId: string,
  reason: string,
  now: Date,
): Promise<SettledRun[]> {
  const settled = await terminateOne(tx, runId, reason, now);
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
