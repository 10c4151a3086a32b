import type { Json } from '../../definitions/define-action.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { DbFlowRun } from '../../store/find-run.ts';
import { insertStep, type NewStep } from '../../store/insert-step.ts';
import { lockOpenRun } from '../../store/lock-open-run.ts';
import {
  emitCompleted,
  reportLostOutcome,
  writeCompletedOutcome,
  type PendingOutcome,
} from '../steps/pending-outcome.ts';
import type { DbActionRun } from '../../store/list-action-runs.ts';
import type { DbCompensationRun } from '../../store/list-compensation-runs.ts';
import type { RuntimeDeps } from '../runtime-deps.ts';

/** Why a replay stopped without finishing: a healthy wait, or a stuck state an operator must see. */
export interface Park {
  waitingFor: string | null;
  stuckReason: string | null;
  /** Engine-internal failure (database down, simulated crash): the job is not acknowledged and comes back. */
  abort?: unknown;
  /** A planning replay reached the run's live position (its first write) without the code throwing. */
  planReached?: boolean;
}

/** A compensation registered after its forward step succeeded, waiting for compensate(). */
export interface RegisteredCompensation {
  actionSequence: number;
  name: string;
  input: Json;
  reclaimAfterSeconds: number | null;
}

/** Thrown inside a session transaction to roll it back because another replay got there first. */
export class ReplayConflict extends Error {
  override readonly name = 'ReplayConflict';
}

/**
 * The state of one replay of one run: what is recorded, where the code is, and what it registered.
 * Sequence numbers are handed out in the order the flow's code asks for steps; that order is the
 * history contract checked against the record.
 */
export class ReplaySession {
  sequence = 0;
  rollbackLevel = 0;
  parallelCompensation = false;
  continueWithError = false;
  compensated = false;
  cancellationDelivered: boolean;
  readonly compensations: RegisteredCompensation[] = [];
  /** The rollback level compensate() is running (newest first), until it finishes. */
  levelInProgress: { level: number; items: RegisteredCompensation[] } | null = null;
  /** ctx.now()/random()/uuid() values not yet written: they go out with the next transaction. */
  readonly pendingValues: NewStep[] = [];
  park: Park | null = null;
  /** The run's version after this replay last wrote it; its park only lands if it still holds. */
  runVersion: number | null = null;
  /**
   * A planning replay (the monitor working out an overdue run's rollback) reads the record and
   * never writes: the first write it would make marks the live position, and it stops there.
   */
  planOnly = false;
  readonly parked: Promise<Park>;
  private signalPark: (p: Park) => void = () => undefined;

  constructor(
    readonly deps: RuntimeDeps,
    readonly run: DbFlowRun,
    readonly recorded: Map<number, DbActionRun>,
    readonly recordedCompensations: DbCompensationRun[],
  ) {
    this.parked = new Promise<Park>((resolve) => (this.signalPark = resolve));
    this.cancellationDelivered = [...recorded.values()].some(
      (r) => r.kind === 'cancel' || (r.status === 'Cancelled' && run.cancel_requested_at !== null),
    );
  }

  get runId(): string {
    return this.run.id;
  }

  get cancelRequested(): boolean {
    return this.run.cancel_requested_at !== null;
  }

  nextSequence(): number {
    this.sequence += 1;
    return this.sequence;
  }

  /** Stops the replay: the flow's pending promise is abandoned, never rejected. */
  stop(park: Park): void {
    this.park ??= park;
    this.signalPark(this.park);
  }

  /** The highest recorded sequence: a finished flow must have reached it (history contract). */
  lastRecordedSequence(): number {
    let max = 0;
    for (const seq of this.recorded.keys()) max = Math.max(max, seq);
    return max;
  }

  /**
   * Completed outcomes not yet written. A completed step's outcome goes out with the replay's next
   * transaction (the next step's claim, a wait, the finish, or the park): one commit per step
   * instead of two, with exactly the same fence.
   */
  readonly pendingOutcomes: PendingOutcome[] = [];

  /**
   * Runs `fn` in a transaction that first writes the buffered completed outcomes and
   * ctx.now()/random()/uuid() values. If an outcome is rejected (the row changed hands), a value
   * conflicts with another replay's, or the run has finished, this replay's view is stale: the
   * transaction rolls back, the loss is reported, and the replay stops quietly (ReplayConflict).
   * If `fn` itself fails, the buffers are kept for the next transaction.
   */
  async tx<T>(fn: (tx: Prisma.TransactionClient) => Promise<T>, opts: { finishesRun?: boolean } = {}): Promise<T> {
    if (this.planOnly) {
      this.stop({ waitingFor: null, stuckReason: null, planReached: true });
      return never<T>();
    }
    const values = this.pendingValues.splice(0);
    const outcomes = this.pendingOutcomes.splice(0);
    const lost: { outcome: PendingOutcome; result: 'rejected' | 'refused' }[] = [];
    try {
      const result = await this.deps.prisma.$transaction(async (tx) => {
        if (opts.finishesRun) await lockOpenRun(tx, this.runId, 'update');
        for (const o of outcomes) {
          const r = await writeCompletedOutcome(tx, o, this.deps.clock.now());
          if (r !== 'recorded') {
            lost.push({ outcome: o, result: r });
            throw new ReplayConflict();
          }
        }
        // Nothing this transaction writes may commit after the run's terminal event (lockOpenRun).
        if (!(await lockOpenRun(tx, this.runId))) throw new ReplayConflict();
        for (const v of values) {
          const row = await insertStep(tx, v);
          if (JSON.stringify(row.output) !== JSON.stringify(v.output ?? null) || row.kind !== 'value')
            throw new ReplayConflict();
          this.recorded.set(v.sequence, row);
        }
        return fn(tx);
      });
      for (const o of outcomes) await emitCompleted(this.deps, o);
      return result;
    } catch (err) {
      if (lost.length > 0) {
        for (const l of lost) await reportLostOutcome(this.deps, l.outcome, l.result);
      } else if (!(err instanceof ReplayConflict)) {
        this.pendingOutcomes.unshift(...outcomes);
        this.pendingValues.unshift(...values);
      }
      throw err;
    }
  }

  /** Writes what is buffered on its own, best effort: before a replay gives up on an engine fault. */
  async flush(): Promise<void> {
    if (this.pendingOutcomes.length === 0) return;
    await this.tx(() => Promise.resolve()).catch(() => undefined);
  }
}

export const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/**
 * Runs engine-internal work for a ctx method. Anything it throws is the engine's own business (a
 * conflict with another replay, a database error, a simulated crash): it stops the replay instead
 * of reaching the flow's code. Only FlowErrors, thrown by the ctx methods themselves, reach it.
 */
export async function internal<T>(session: ReplaySession, work: () => Promise<T>): Promise<T> {
  if (session.park) return never<T>();
  try {
    return await work();
  } catch (err) {
    session.stop(
      err instanceof ReplayConflict
        ? { waitingFor: null, stuckReason: null }
        : { waitingFor: null, stuckReason: null, abort: err },
    );
    return never<T>();
  }
}
