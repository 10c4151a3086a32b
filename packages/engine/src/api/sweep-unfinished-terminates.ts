import type { Prisma } from '../generated/prisma/client.ts';
import { isLockWaitGivenUp } from '../process/process-deps.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import type { SettledRun } from '../runtime/settle-run.ts';
import { findUnfinishedTerminates, type UnfinishedTerminate } from '../store/find-unfinished-terminates.ts';
import { listTreeToTerminate, lockOpenRuns } from '../store/lock-open-tree.ts';
import { inSweepTransaction } from '../sweeps/in-sweep-transaction.ts';
import { HeldRunWaits, noteHeldRuns } from '../sweeps/on-monitored-run.ts';
import { afterTerminate, terminateBatch, terminateOne } from './terminate-run.ts';

/** What one pass of {@link sweepUnfinishedTerminates} did. */
export interface UnfinishedTerminatesPass {
  /** Runs it terminated. */
  terminated: number;
  /** It stopped on its time budget, or found a full page of parents and ended runs: a pass at once. */
  more: boolean;
}

/** What each run the monitor ends carries on its `run.terminated` event (`finished_by`). */
export const finishedByMonitor =
  'monitor: the terminate that fenced this run stopped before its batches ended it (ADR 0140)';

/** The sweep's name in its logs and in a `run_held` journal entry (ADR 0137). */
const sweepName = 'terminate finisher';

/**
 * The monitor finishes a terminate that stopped between its batches (ADR 0140). A terminate commits its root
 * and the fence of its tree first, then ends the tree a batch at a time (ADR 0125, ADR 0126); a crash, a
 * lost connection or a SIGKILL between two batches left the rest fenced (their cleanup window closed, no
 * wake), open for ever unless the command was sent again. Under each closed parent of a run the fence closed
 * at least `monitor.unfinished_terminate_after_seconds` ago, the sweep walks as the terminate's batches walk
 * (`listTreeToTerminate`, parents first) and ends each open run as they would have (Terminated, with their
 * reason, what it left undone, its `run.finished`), `finished_by` on its event. A run another session holds
 * is passed over (`skip locked`, noted for ADR 0137's `run_held`) until the next pass; a terminate still
 * walking its tree meanwhile ends the same runs, each once, by whichever locks it first. Bounded by
 * `sweeps.pass_budget_ms` and the lease (`keep`), each batch a transaction of the sweep's limit.
 */
export async function sweepUnfinishedTerminates(
  deps: RuntimeDeps,
  opts: {
    limit?: number;
    /** Renews the sweeper's lease; false (lost) stops the sweep before the next batch. */
    keep?: () => Promise<boolean>;
  } = {},
): Promise<UnfinishedTerminatesPass> {
  const limit = opts.limit ?? deps.config.monitor.expiration.page_size;
  const afterMs = deps.config.monitor.unfinished_terminate_after_seconds * 1000;
  const started = performance.now();
  const outOfTime = () => performance.now() - started > deps.config.sweeps.pass_budget_ms;
  const parents = await findUnfinishedTerminates(deps.prisma, {
    before: new Date(deps.clock.now().getTime() - afterMs),
    limit,
  });
  const waits = HeldRunWaits.of(deps);
  const limitMs = deps.config.sweeps.transaction_timeout_ms;
  let terminated = 0;
  let stopped = false;
  for (const parent of parents) {
    let size = terminateBatch;
    // The runs other sessions hold, met by this pass under this parent, and what is under them: each batch's
    // walk goes on past them, so a held front of the walk does not hide the runs after it (ADR 0141).
    const passOver = new Set<string>();
    for (;;) {
      if (outOfTime() || (opts.keep && !(await opts.keep()))) {
        stopped = true;
        break;
      }
      // A row another session holds that the batch must still wait for (a closed parent's, which ending its
      // child settles) is waited for as the monitor's other sweeps wait (ADR 0135), never to the batch's limit.
      const waitMs = Math.min(waits.next(), Math.floor(limitMs / 4));
      const began = performance.now();
      const batch = await inSweepTransaction(
        deps.prisma,
        limitMs,
        (tx) => endBatch(tx, parent, size, deps.clock.now(), passOver),
        { lock_timeout: String(waitMs) },
      ).catch((err: unknown) => {
        const gaveUp = isLockWaitGivenUp(err);
        if (gaveUp) waits.spend(performance.now() - began);
        // A batch past the sweep's limit, or one that met a held row, committed nothing: half as many again,
        // down to one run; that one, held, is passed over until the next pass.
        if (size > 1) return 'smaller' as const;
        if (!gaveUp)
          deps.logger.warn(
            { err, runId: parent.id },
            `${sweepName}: the runs under ${parent.id} could not be ended; the next pass tries again`,
          );
        return gaveUp ? ('held' as const) : null;
      });
      if (batch === 'smaller') {
        size = Math.max(1, Math.floor(size / 2));
        continue;
      }
      if (batch === 'held' || batch === null) break;
      await noteHeldRuns(deps, sweepName, { held: batch.held, taken: batch.settled.map((s) => s.run.id) });
      terminated += batch.settled.length;
      await afterTerminate(deps, batch.settled);
      for (const id of batch.passOver) passOver.add(id);
      // The walk is at its end, or it met nothing it could end or pass over: the next pass looks again.
      if (batch.listed < size || (batch.settled.length === 0 && batch.passOver.length === 0)) break;
    }
    if (stopped) break;
  }
  if (terminated > 0)
    deps.logger.info({ terminated }, 'the monitor finished terminates that had stopped between their batches');
  return { terminated, more: stopped || (parents.length === limit && terminated > 0) };
}

/**
 * One batch of the walk under `parent`: the next `size` open runs the terminate's batches would end (past
 * those of `passOver`), each locked `SKIP LOCKED` and ended as they end it. A run another session holds is
 * left, and so is every run under it in this batch: its end would settle its parent's step and wait for the
 * parent's row. Those are answered as `passOver`, for the next batch's walk to go past.
 */
async function endBatch(
  tx: Prisma.TransactionClient,
  parent: UnfinishedTerminate,
  size: number,
  now: Date,
  passOver: ReadonlySet<string>,
) {
  const next = await listTreeToTerminate(tx, parent.id, parent.reason, size, [...passOver]);
  const locked = await lockOpenRuns(tx, next, { skipLocked: true });
  const listed = new Set(next.map((r) => r.id));
  const ended = new Set<string>();
  const left = new Set<string>();
  const settled: SettledRun[] = [];
  for (const run of next) {
    if (!locked.has(run.id)) {
      left.add(run.id);
      continue;
    }
    if (listed.has(run.parentId) && !ended.has(run.parentId)) {
      if (left.has(run.parentId)) left.add(run.id);
      continue;
    }
    const own = await terminateOne(tx, run.id, run.reason, now, finishedByMonitor);
    if (!own) continue;
    // Its parent ended before it (by the terminate, or by this walk): its refusal is not journaled.
    settled.push({ ...own, refusedParent: null });
    ended.add(run.id);
  }
  return {
    settled,
    held: next.filter((r) => !locked.has(r.id)).map((r) => r.id),
    passOver: [...left],
    listed: next.length,
  };
}
