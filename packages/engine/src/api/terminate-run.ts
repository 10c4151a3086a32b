import { commandFailure, EngineError } from '../errors/engine-error.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { textRules } from '../input/input-limits.ts';
import { leftUndoneJson, readLeftUndone } from '../runtime/find-left-undone.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { afterRunSettled, settleRunInTransaction, type SettledRun } from '../runtime/settle-run.ts';
import { findRun } from '../store/find-run.ts';
import { listTreeToTerminate, lockOpenRuns, lockOpenTree } from '../store/lock-open-tree.ts';
import { lockOpenRun } from '../store/lock-open-run.ts';
import { requestDescendantsCancel } from '../store/request-descendants-cancel.ts';
import { inOperatorTransaction, operatorStatement } from './operator-transaction.ts';

/**
 * Closes a run at once as Terminated: no cleanup window, no compensation. A straggling worker's
 * later write to one of its steps is refused (`write_refused`). The run states what it left undone
 * and which steps were in flight (`left_undone` on its error and its `run.terminated` event, ADR 0091). Its open 'propagate' children, and
 * theirs, are terminated after it, a bounded batch per transaction (ADR 0125; one transaction, ADR 0089, before; a repair's
 * terminate too since ADR 0126). Bad input (a run id that is not a uuid,
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
  const root = await inOperatorTransaction(
    deps,
    async (tx) => {
      // The tree locked deepest first, the root last (ADR 0089): a finishing child is waited for, never
      // met in a cycle, and once held nothing is added to the tree or leaves it before the fence commits.
      await lockOpenTree(tx, runId);
      if (!(await lockOpenRun(tx, runId, 'update'))) return null;
      return (await terminateRootAndFence(tx, runId, opts.reason, deps.clock.now())).settled;
    },
    `terminate of run ${runId}`,
  );
  if (root) await afterRunSettled(deps, root);
  const children = await terminateDescendants(deps, runId, opts.reason);
  return { terminated: root !== null || children > 0 };
}

/**
 * The first commit of a terminate of a tree (ADR 0125), in the caller's transaction, the tree already
 * locked ({@link lockOpenTree}, then the root FOR UPDATE): terminates the root and, in one statement,
 * fences its open 'propagate' descendants (each one's cleanup window closed `now`, no event, no wake),
 * so none runs another line of its code before {@link terminateDescendants} ends it. `settled` is null
 * when the root had already finished (nothing is fenced then); `fenced` is how many descendants the
 * fence reached. Both the engine's terminate and a repair's (run-repairs.ts, ADR 0126) start so; call
 * `afterRunSettled` on `settled` once committed, then {@link terminateDescendants}.
 */
export async function terminateRootAndFence(
  tx: Prisma.TransactionClient,
  runId: string,
  reason: string,
  now: Date,
): Promise<{ settled: SettledRun | null; fenced: number }> {
  const settled = await terminateOne(tx, runId, reason, now);
  if (!settled) return { settled: null, fenced: 0 };
  // Its whole open tree fenced in the same commit, in one statement: each descendant's cleanup window
  // closed now, so none runs another line of its code before its batch terminates it.
  const { reached } = await requestDescendantsCancel(tx, {
    rootId: runId,
    reason,
    deadline: now,
    now,
    terminated: true,
  });
  return { settled, fenced: reached };
}

/**
 * The rest of a terminate of a tree (ADR 0125): the open 'propagate' descendants of `runId`, parents
 * first, a bounded batch per transaction however wide the tree (one transaction for the whole tree
 * outlasted Prisma's 5 s with 2,000 children, review 49), each with its reason (`parent <p> was
 * terminated: …`) and, once its batch committed, its `run.finished`. The walk also goes under runs
 * already Terminated, so a terminate that stopped between batches (a crash, a lost connection) is
 * finished by issuing it again, or by the monitor (ADR 0140). Returns how many runs it ended; `onBatch` hears
 * the running total after each batch's commit.
 */
export async function terminateDescendants(
  deps: RuntimeDeps,
  runId: string,
  reason: string,
  onBatch?: (ended: number) => void,
): Promise<number> {
  let children = 0;
  let size = terminateBatch;
  for (;;) {
    const batch = await inOperatorTransaction(deps, async (tx) => {
      const next = await listTreeToTerminate(tx, runId, reason, size);
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
    }).catch((err: unknown) => {
      // A batch that outlasted its transaction (a loaded database) committed nothing: half as many again,
      // down to one run, so a terminate goes on under load instead of stopping part way.
      if (size > 1 && expiredTransaction(err)) return 'smaller' as const;
      throw err;
    });
    if (batch === 'smaller') {
      size = Math.max(1, Math.floor(size / 2));
      continue;
    }
    if (batch === null) return children;
    children += batch.length;
    onBatch?.(children);
    await afterTerminate(deps, batch);
  }
}

/** Runs a terminate ends per transaction below its root (ADR 0125): each takes about eight statements. */
export const terminateBatch = 100;

/** Prisma's answer to a statement or commit of an interactive transaction past its timeout. */
const expiredTransaction = (err: unknown): boolean => /expired transaction/i.test(String((err as Error)?.message));

/**
 * Terminates one open run, its row already locked, in the caller's transaction; null when it had finished.
 * `finishedBy` says, on its `run.terminated` event, who ended it when it was not the command's own walk.
 */
export async function terminateOne(
  tx: Prisma.TransactionClient,
  runId: string,
  reason: string,
  now: Date,
  finishedBy?: string,
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
      details: { left_undone: leftUndone, ...(finishedBy === undefined ? {} : { finished_by: finishedBy }) },
    },
    now,
  );
}

/**
 * What follows a committed terminate, for the run and each child it reached, in that order: the
 * journal entry of a refused parent step and the `run.finished` event.
 */
export async function afterTerminate(deps: RuntimeDeps, settled: readonly SettledRun[]): Promise<void> {
  for (const one of settled) await afterRunSettled(deps, one);
}
