import type { Json } from '../../definitions/define-action.ts';
import type { RawDb } from '../../db/raw-db.ts';
import type { DbFlowRun } from '../../store/find-run.ts';
import { insertStep, type NewStep } from '../../store/insert-step.ts';
import { enqueueJob } from '../../store/enqueue-job.ts';
import { lockOpenRunEpoch } from '../../store/lock-open-run.ts';
import {
  announceOutcomes,
  writePendingOutcome,
  writePendingOutcomes,
  type OutcomeWrite,
  type PendingOutcome,
} from '../steps/pending-outcome.ts';
import { writeHeldOutcomes } from '../held-outcomes.ts';
import { inRunTransaction } from '../in-run-transaction.ts';
import type { TransitionOutcome } from '../../store/step-transitions.ts';
import { transitionOutcome, type FusableDeps } from './fused-outcome.ts';
import type { DbActionRun } from '../../store/list-action-runs.ts';
import type { DbCompensationRun } from '../../store/list-compensation-runs.ts';
import type { StepEvent } from '../../store/step-event.ts';
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

/** A new first step's claim, as the replay of a run not yet written would send it (ADR 0048). */
export interface FirstStepClaim {
  step: NewStep;
  /** Its `action.started` event. */
  started: StepEvent;
  claimedAt: Date;
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
  /** A compensation of a rollback level of this replay failed or did not finish (ADR 0124): the run's end states what it left undone. */
  rollbackStopped = false;
  cancellationDelivered: boolean;
  readonly compensations: RegisteredCompensation[] = [];
  /** The rollback level compensate() is running (newest first), until it finishes. */
  levelInProgress: { level: number; items: RegisteredCompensation[] } | null = null;
  /** ctx.now()/random()/uuid() values not yet written: they go out with the next transaction. */
  readonly pendingValues: NewStep[] = [];
  park: Park | null = null;
  /**
   * This replay recorded a step's outcome since its load (a parallel branch's alone, one a wait's or a
   * claim's transaction carried, one a statement carried). Another replay may have parked on that step
   * as running here meanwhile: a park of this replay's that does not land owes the run a wake (review 19).
   */
  recordedOutcome = false;
  /**
   * This replay's outcomes that a transaction of its own found rejected (the row changed hands: another
   * worker took the step over). The replay stops as stale; its park says why from the row (ADR 0129).
   */
  readonly rejectedOutcomes: PendingOutcome[] = [];
  /**
   * The flow's code asked for a child in this replay (set before the child's start, ADR 0093): the run
   * may have an open child, so its end goes through the transaction that cancels open children.
   */
  askedForChild = false;
  /**
   * The cancellation was handed to the flow's code in this replay (a ctx call's promise rejected with
   * it). A child the code asks for after that is its own choice (a clean-up child in a catch); one asked
   * for before (a sibling in the same `Promise.all`) is part of the cancelled work (ADR 0093).
   */
  cancellationRaised = false;
  /** The run's version after this replay last wrote it; its park only lands if it still holds. */
  runVersion: number | null = null;
  /**
   * The run's history epoch when this replay read its steps (ADR 0085): a repair that rewrote them
   * since moved it on, and then this replay writes nothing more (null: nothing to compare).
   */
  historyEpoch: number | null = null;
  /**
   * A planning replay (the monitor working out an overdue run's rollback) reads the record and
   * never writes: the first write it would make marks the live position, and it stops there.
   */
  planOnly = false;
  /**
   * Set on the replay of a run its start has not written yet (ADR 0048), whose handles refuse any
   * database work: a first step's claim on the one-statement path is handed here instead of sent.
   * The step then waits for the row the start wrote (the replay goes on as the pool's, ADR 0097), or
   * for null: the replay goes no further.
   */
  firstStepProbe: ((claim: FirstStepClaim) => Promise<DbActionRun | null>) | null = null;
  /** The claim of a step the start's own statement made for this replay (ADR 0048): taken once, by that step. */
  private startClaim: { rowId: string; attempts: number } | null = null;
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

  /** Hands this replay the claim the start made of its first step (ADR 0048). */
  claimedByStart(row: DbActionRun): void {
    this.startClaim = { rowId: row.id, attempts: row.attempts };
  }

  /** The attempts of the start's claim of row `rowId`, once; null when the start claimed no such row. */
  takeStartClaim(rowId: string): number | null {
    if (this.startClaim?.rowId !== rowId) return null;
    const { attempts } = this.startClaim;
    this.startClaim = null;
    return attempts;
  }

  /** Whether the start claimed row `rowId` for this replay and its step has not taken the claim yet. */
  hasStartClaim(rowId: string): boolean {
    return this.startClaim?.rowId === rowId;
  }

  get runId(): string {
    return this.run.id;
  }

  get cancelRequested(): boolean {
    return this.run.cancel_requested_at !== null;
  }

  /**
   * The first sequence past `limits.max_steps_per_run` this replay was asked for, not recorded (ADR
   * 0125): the replay stopped there and the run ends Failed naming the setting.
   */
  stepLimitReached: number | null = null;
  /** The step at the warning fraction of the limit, asked for here and not recorded: journaled once by {@link internal}. */
  stepLimitNear: number | null = null;

  nextSequence(): number {
    this.sequence += 1;
    const seq = this.sequence;
    if (this.planOnly || this.recorded.has(seq)) return seq;
    const { max_steps_per_run: max, steps_per_run_warning_fraction: fraction } = this.deps.config.limits;
    if (seq > max) {
      this.stepLimitReached ??= seq;
      this.stop({ waitingFor: null, stuckReason: null });
    } else if (seq === Math.max(1, Math.floor(max * fraction))) this.stepLimitNear = seq;
    return seq;
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
   * ctx.now()/random()/uuid() values. Each outcome's fenced write stands on its own: one that is
   * rejected (the row changed hands, the run finished) is journaled and never takes the others
   * with it. A rejection means this replay's view is stale: the others commit without `fn`, with a
   * wake for a fresh replay (one that parked on them while they were held here would otherwise wait
   * for ever), and this replay stops quietly (ReplayConflict). Whatever else rolls the transaction
   * back, the outcomes stay buffered: an outcome leaves the buffer only recorded or rejected.
   */
  async tx<T>(fn: (tx: RawDb) => Promise<T>, opts: { finishesRun?: boolean } = {}): Promise<T> {
    if (this.planOnly) {
      this.stop({ waitingFor: null, stuckReason: null, planReached: true });
      return never<T>();
    }
    const values = this.pendingValues.splice(0);
    const outcomes = this.pendingOutcomes.splice(0);
    let fates: { outcome: PendingOutcome; result: OutcomeWrite }[] = [];
    let done: { stale: true } | { stale: false; value: T };
    try {
      done = await inRunTransaction(this.deps, async (tx) => {
        // The run row is locked first, in the strongest mode this transaction may need (a finish
        // takes FOR UPDATE, a park or claim updates the row): upgrading a FOR KEY SHARE later
        // deadlocks against a finisher queued between the two (ADR 0011).
        const epoch = await lockOpenRunEpoch(tx, this.runId, opts.finishesRun ? 'update' : 'no key update');
        const open = epoch !== null;
        const now = this.deps.clock.now();
        // Each outcome stands on its own fence (ADR 0010): a rejected one never takes another with it.
        fates = await writePendingOutcomes(tx, outcomes, now);
        // A repair rewrote the steps since this replay read them (ADR 0085): what it recorded stands
        // (each outcome passed its own fence), and the replay goes no further; the repair's wake, or
        // one of its own for an outcome recorded here, replays the run from the new record.
        const repaired = open && this.historyEpoch !== null && epoch !== this.historyEpoch;
        if (repaired || fates.some((f) => f.result === 'rejected' || f.result === 'refused')) {
          if (fates.some((f) => f.result === 'recorded'))
            await enqueueJob(tx, { kind: 'wake-run', runId: this.runId, availableAt: now });
          return { stale: true as const };
        }
        // Nothing this transaction writes may commit after the run's terminal event: the lock taken
        // above is held to the commit, so the run it found open stays open until then.
        if (!open) throw new ReplayConflict();
        for (const v of values) {
          const row = await insertStep(tx, v);
          if (JSON.stringify(row.output) !== JSON.stringify(v.output ?? null) || row.kind !== 'value')
            throw new ReplayConflict();
          this.recorded.set(v.sequence, row);
        }
        return { stale: false as const, value: await fn(tx) };
      });
    } catch (err) {
      await this.keep(outcomes);
      // Values that conflicted with another replay's are that replay's to keep: ours are dropped.
      if (!(err instanceof ReplayConflict)) this.pendingValues.unshift(...values);
      throw err;
    }
    if (fates.some((f) => f.result === 'recorded')) this.recordedOutcome = true;
    for (const f of fates) if (f.result === 'rejected') this.rejectedOutcomes.push(f.outcome);
    await announceOutcomes(this.deps, fates);
    if (done.stale) throw new ReplayConflict();
    return done.value;
  }

  /**
   * Sends this replay's next write as ONE autocommitted statement (ADR 0042), carrying the buffered
   * outcome, if any (call only when {@link canFuse}). `write` returns null when its statement wrote
   * nothing (the run finished, a cancellation this replay has not seen, the outcome rejected or
   * refused): the outcome goes back to the buffer and the caller takes the transaction path, which
   * meets whatever closed the gate exactly as it did before. Otherwise the statement recorded the
   * outcome, which is announced. On a database error the outcome is kept, as by {@link tx}. `write`
   * sends its statement itself (a transition goes in a batch with other runs', ADR 0045).
   */
  async oneStatement<T>(write: (deps: FusableDeps, outcome: TransitionOutcome | undefined) => Promise<T | null>) {
    const outcomes = this.pendingOutcomes.splice(0);
    let value: T | null;
    try {
      value = await write(this.deps as FusableDeps, transitionOutcome(outcomes[0]));
    } catch (err) {
      await this.keep(outcomes);
      throw err;
    }
    if (value === null) {
      await this.keep(outcomes);
      return null;
    }
    if (outcomes.length > 0) this.recordedOutcome = true;
    await announceOutcomes(
      this.deps,
      outcomes.map((outcome) => ({ outcome, result: 'recorded' as const })),
    );
    return value;
  }

  /**
   * Set once the replay's park or abort has written (or handed on) what it held: see {@link keep}. A
   * step still running beside the one the replay parked on (a `Promise.all` of a child and an action)
   * finishes after that, with no next transaction of this replay to ride on (review 23).
   */
  private flushed = false;

  /**
   * Buffers a completed step's outcome for the replay's next transaction; once the replay has parked
   * or given up ({@link flush}) there is none, so the outcome is written at once, on its own fence,
   * with a wake for a fresh replay (or kept by the engine while the database is away).
   */
  buffer(outcome: PendingOutcome): Promise<void> | undefined {
    // The common case costs no await (ADR 0049): undefined, the outcome in the buffer.
    if (!this.flushed) {
      this.pendingOutcomes.push(outcome);
      return undefined;
    }
    return this.writeLate(outcome);
  }

  /**
   * Once the replay has been flushed (parked, given up or finished), writes `outcome` (a completion or
   * a failure) at once on its own fence, with a wake, and resolves when done; otherwise undefined, and
   * the caller writes it as it would have.
   */
  writeIfLate(outcome: PendingOutcome): Promise<void> | undefined {
    return this.flushed ? this.writeLate(outcome) : undefined;
  }

  private async writeLate(...outcomes: PendingOutcome[]): Promise<void> {
    if ((await writeHeldOutcomes(this.deps, this.runId, outcomes)) === 'hold')
      this.deps.heldOutcomes.hold(this.runId, outcomes);
  }

  /**
   * Puts outcomes whose write failed back where they will be written: the buffer, or, once the park's
   * or the abort's flush has run (a sibling still in flight when the replay stopped), a write of their
   * own, with a wake, which the caller awaits. An outcome leaves this session only recorded, rejected,
   * or handed on.
   */
  keep(outcomes: PendingOutcome[]): Promise<void> | undefined {
    if (outcomes.length === 0) return undefined;
    if (!this.flushed) {
      this.pendingOutcomes.unshift(...outcomes);
      return undefined;
    }
    // The flush has run: nothing else of this replay's will write them, so they are written now, each
    // on its own fence, with a wake (kept by the engine's backlog while the database is away). Review 24.
    return this.writeLate(...outcomes);
  }

  /**
   * Writes one completed outcome in a transaction of its own: a parallel branch's result is made
   * durable as soon as it exists, so a sibling that loses its claim, or a duplicate replay that
   * meets the block, never finds it held in memory. Lost → journaled, and the caller re-reads the row.
   */
  async writeOutcome(outcome: PendingOutcome): Promise<OutcomeWrite> {
    let result: OutcomeWrite;
    try {
      result = await inRunTransaction(this.deps, (tx) => writePendingOutcome(tx, outcome, this.deps.clock.now()));
    } catch (err) {
      // The database failed us: the outcome stays with this replay, whose abort writes it (flush).
      await this.keep([outcome]);
      throw err;
    }
    if (result === 'recorded') this.recordedOutcome = true;
    await announceOutcomes(this.deps, [{ outcome, result }]);
    return result;
  }

  /**
   * Once a replay has parked, or before it gives up on an engine fault (the database unreachable): the
   * outcomes it still holds (one its park's transaction did not carry, or put back) are written on
   * their own, retried with backoff within `worker.outcome_retry` (a step whose side effect ran must
   * not stay Running for want of one write), with a wake for a fresh replay. If the budget runs out,
   * the engine's backlog keeps them and writes them once the database answers. Outcomes that come
   * later go the same way ({@link buffer}, {@link keep}).
   */
  flush(): Promise<void> | undefined {
    this.flushed = true;
    const outcomes = this.pendingOutcomes.splice(0);
    // The common case (a finish that carried everything) costs no await.
    return outcomes.length === 0 ? undefined : this.writeLate(...outcomes);
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
  if (session.stepLimitNear !== null) await journalStepLimitNear(session, session.stepLimitNear);
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

/** The anomaly of a run starting the step at the warning fraction of its step limit (ADR 0125); once per replay. */
async function journalStepLimitNear(session: ReplaySession, sequence: number): Promise<void> {
  session.stepLimitNear = null;
  const max = session.deps.config.limits.max_steps_per_run;
  await session.deps.journal({
    code: 'run_step_limit_near',
    message: `run ${session.runId} is starting step ${sequence} of at most ${max} (limits.max_steps_per_run): at ${max} steps it ends Failed; a flow this long should go on as a new run`,
    runId: session.runId,
    sequence,
    site: 'replay.step_limit',
    details: { steps: sequence, limit: max, setting: 'limits.max_steps_per_run' },
  });
}
