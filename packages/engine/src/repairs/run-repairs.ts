import { cancelTree } from '../api/cancel-run.ts';
import { kickInTransaction, whyKickWaits } from '../api/kick-run.ts';
import { findOrphanedSteps } from '../store/find-orphaned-steps.ts';
import { listCancelReach } from '../store/request-descendants-cancel.ts';
import { signalInTransaction } from '../api/signal-run.ts';
import { startExpiryInTransaction } from '../api/sweep-expired-runs.ts';
import { terminateBatch, terminateDescendants, terminateRootAndFence } from '../api/terminate-run.ts';
import { readLeftUndone, type LeftUndone } from '../runtime/find-left-undone.ts';
import { afterRunSettled } from '../runtime/settle-run.ts';
import type { Json } from '../definitions/define-action.ts';
import { commandFailure, EngineError } from '../errors/engine-error.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { checkSignalPayload } from '../runtime/check-signal-payload.ts';
import { planRollback, type RollbackPlan } from '../runtime/plan-rollback.ts';
import { listTreeToTerminate } from '../store/lock-open-tree.ts';
import { readRollbackBasis } from '../store/read-rollback-basis.ts';
import type { Db } from '../store/types.ts';
import { bringDeadlineForward } from '../store/repairs/bring-deadline-forward.ts';
import type { RepairCommandOf } from './repair-command.ts';
import { noEffects, type RepairEffects } from './repair-effects.ts';
import {
  PreparedStale,
  type RepairDeps,
  type RepairHandler,
  type RepairPlan,
  type RunTarget,
} from './repair-handler.ts';

const iso = (d: Date) => d.toISOString();
const wake = (runId: string, at: Date) => ({ kind: 'wake-run' as const, runId, availableAt: iso(at) });

/**
 * A run's open 'propagate' descendants as its terminate's batches reach them, parents first (by depth, then
 * id): through open runs and through closed ones that were asked to cancel (review 66), so the preview lists
 * what the batches end.
 */
async function treeToTerminate(db: Db, runId: string): Promise<string[]> {
  return (await listTreeToTerminate(db, runId, '', 2_147_483_647)).map((n) => n.id);
}

/** What a terminate's preview says the run will leave undone, as its record has it now (ADR 0091). */
function leftUndoneNotes(l: LeftUndone): string[] {
  const notes = l.steps.map((s) => `left undone: step ${s.sequence} (${s.name}) completed and is not compensated`);
  for (const f of l.in_flight ?? [])
    notes.push(
      f.kind === 'action'
        ? `in flight: step ${f.sequence} (${f.name}) is running on a worker; whether it took effect will not be known`
        : `in flight: compensation ${f.name} of step ${f.sequence} is running on a worker; whether it took effect will not be known`,
    );
  return notes;
}

/** Refuses a cancel or expiry of a run that is already winding down. */
function windingDown(target: RunTarget): string[] {
  const { run } = target;
  if (run.expired_at) return [`the run already expired at ${iso(run.expired_at)}; it is compensating`];
  if (run.cancel_requested_at)
    return [`a cancellation was already requested at ${iso(run.cancel_requested_at)} (${run.cancel_reason ?? ''})`];
  return [];
}

export const kickRepair: RepairHandler<RepairCommandOf<'run.kick'>, RunTarget> = {
  async plan(db, deps, cmd, { run }) {
    const now = deps.runtime.clock.now();
    // A step held by a worker that is gone (ADR 0010) is reclaimed by the kick first: not a blocker.
    const orphans = await findOrphanedSteps(db, {
      deadAfterSeconds: deps.runtime.config.worker.dead_after_seconds,
      runId: run.id,
      limit: 100,
    });
    const waits = await whyKickWaits(
      db,
      run.id,
      now,
      orphans.map((o) => o.id),
    );
    const effects = noEffects();
    effects.jobs.push(wake(run.id, now));
    effects.history.push(...orphans.map(() => 'step.reclaimed'));
    effects.history.push('run.kicked');
    return { blockers: waits ? [waits] : [], effects };
  },
  async perform(tx, deps, cmd, { run }, _p, { now }) {
    const r = await kickInTransaction(tx, deps.runtime, run.id, now);
    if (!r.kicked) throw new EngineError('repair_refused', r.reason);
    return {};
  },
};

/** The payload checked against the flow's signal schema (bad input whatever state the run is in). */
async function prepareSignal(
  deps: RepairDeps,
  cmd: RepairCommandOf<'run.signal'>,
  { run }: RunTarget,
): Promise<{ payload: Json }> {
  const payload = (cmd.signal.payload ?? true) as Json;
  const signal = { flowName: run.flow_name, name: cmd.signal.name, payload };
  return { payload: await checkSignalPayload(deps.runtime.registry, signal, 'signal.') };
}

export const signalRepair: RepairHandler<RepairCommandOf<'run.signal'>, RunTarget, { payload: Json }> = {
  prepare: prepareSignal,
  async plan(_db, deps, cmd, { run }, { payload }) {
    const effects = noEffects();
    effects.signals.push({ runId: run.id, name: cmd.signal.name, payload });
    effects.jobs.push(wake(run.id, deps.runtime.clock.now()));
    effects.history.push('signal.sent');
    return { blockers: [], effects };
  },
  async perform(tx, _deps, cmd, { run }, { payload }, { now }) {
    await signalInTransaction(tx, { runId: run.id, name: cmd.signal.name, payload, now });
    return {};
  },
};

/** A rollback plan with the record it was planned from (the run's step and compensation rows, read first). */
type PreparedRollback = RollbackPlan & { basis: string };

/**
 * The rollback a cancel or an expiry would start: planned by a replay that writes nothing, outside the
 * repair's transaction, from the record as read just before (its basis).
 */
async function prepareRollback(deps: RepairDeps, _cmd: unknown, { run }: RunTarget): Promise<PreparedRollback> {
  const basis = await readRollbackBasis(deps.runtime.prisma, run.id);
  const plan = await planRollback(deps.runtime, run, {
    timeoutMs: deps.runtime.config.monitor.expiration.plan_timeout_ms,
  }).catch((err: unknown) => ({
    ok: false as const,
    error: { name: 'PlanFailed', message: err instanceof Error ? err.message : String(err) },
  }));
  return { ...plan, basis };
}

/**
 * Inside the repair's transaction, with the run locked: a step or compensation that moved since the plan
 * was made (a live replay's outcome committed in between) makes the plan stale, and what the repair
 * would record and tell the operator with it (the compensations it names) wrong (ADR 0085).
 */
async function assertRollbackCurrent(tx: Db, runId: string, rollback: PreparedRollback): Promise<void> {
  if ((await readRollbackBasis(tx, runId)) !== rollback.basis)
    throw new PreparedStale(`run ${runId} moved on while its rollback was planned`);
}

function cleanupUntil(deps: RepairDeps, cmd: { cleanupSeconds?: number | undefined }): Date {
  const seconds = cmd.cleanupSeconds ?? deps.runtime.config.runs.cancel_cleanup_seconds;
  return new Date(deps.runtime.clock.now().getTime() + seconds * 1000);
}

export const cancelRepair: RepairHandler<RepairCommandOf<'run.cancel'>, RunTarget, PreparedRollback> = {
  prepare: prepareRollback,
  async plan(db, deps, cmd, target, rollback) {
    const { run } = target;
    const now = deps.runtime.clock.now();
    const deadline = cleanupUntil(deps, cmd);
    const effects = noEffects();
    for (const id of [run.id, ...(await listCancelReach(db, run.id))]) {
      effects.jobs.push(wake(id, now), wake(id, deadline));
      effects.history.push(id === run.id ? 'run.cancel_requested' : `run.cancel_requested (child ${id})`);
    }
    if (rollback.ok) effects.compensations.push(...rollback.compensations);
    else
      effects.notes.push(
        `its rollback cannot be planned now (${rollback.error.message}): the cleanup window closes it`,
      );
    effects.notes.push(
      `the run ends Cancelled once its code has compensated, or when the window closes at ${iso(deadline)}`,
    );
    return { blockers: windingDown(target), effects };
  },
  async perform(tx, deps, cmd, { run }, rollback, { now }) {
    await assertRollbackCurrent(tx, run.id, rollback);
    if (!(await cancelTree(tx, run.id, cmd.reason, cleanupUntil(deps, cmd), now)))
      throw new EngineError('repair_refused', `run ${run.id} could not be cancelled: it is no longer open`);
    return {};
  },
};

/** Descendants whose left-undone a terminate's preview states one by one; past them, a count (ADR 0126). */
const describedDescendants = 20;

/** Of `ids`, those with any step or compensation on record (the others leave nothing undone), in their order: one statement. */
async function withSteps(db: Db, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.$queryRaw<{ id: string }[]>(Prisma.sql`
    select t.id::text as id from unnest(${ids}::uuid[]) with ordinality as t (id, o)
     where exists (select 1 from "sagaflow"."action_runs" a where a.run_id = t.id)
        or exists (select 1 from "sagaflow"."compensation_runs" c where c.run_id = t.id)
     order by t.o`);
  return rows.map((r) => r.id);
}

const descendantsOf = (n: number) => `${n} open descendant${n === 1 ? '' : 's'}`;

/**
 * A terminate of a run and its open 'propagate' tree, as the engine's terminate does it (ADR 0125,
 * 0126): the repair's transaction (its checks, its audit row, the approval's outcome) terminates the
 * run and fences every open descendant; once it has committed, the descendants are terminated a
 * bounded batch per transaction, each with its reason. Its preview names every descendant, and
 * states what each leaves undone for the first few that have steps, however wide the tree.
 */
export const terminateRepair: RepairHandler<RepairCommandOf<'run.terminate'>, RunTarget> = {
  async plan(db, _deps, _cmd, { run }) {
    const effects = noEffects();
    effects.transitions.push({ subject: `run ${run.id}`, from: run.status, to: 'Terminated' });
    effects.history.push('run.terminated');
    const children = await treeToTerminate(db, run.id);
    for (const child of children) {
      effects.transitions.push({
        subject: `run ${child} (descendant: fenced in this commit, terminated after it)`,
        from: 'open',
        to: 'Terminated',
      });
      effects.history.push(`run.terminated (child ${child})`);
    }
    effects.notes.push('no compensation runs: what the run did stays done');
    effects.notes.push(...leftUndoneNotes(await readLeftUndone(db, run.id)));
    if (children.length > 0)
      effects.notes.push(
        `${descendantsOf(children.length)}: fenced in the repair's commit (their cleanup window closed, none runs its code again), ` +
          `then terminated ${terminateBatch} per transaction after it; were that to stop part way, the same command sent again (or a terminate of the run) finishes them`,
      );
    const stepped = await withSteps(db, children);
    for (const child of stepped.slice(0, describedDescendants))
      effects.notes.push(...leftUndoneNotes(await readLeftUndone(db, child)).map((n) => `child run ${child}: ${n}`));
    if (stepped.length > describedDescendants)
      effects.notes.push(
        `${stepped.length - describedDescendants} more descendants have steps on record: what each leaves undone is on its run.terminated event`,
      );
    return { blockers: [], effects };
  },
  async perform(tx, deps, cmd, { run }, _p, { now }) {
    // The run and the fence of its tree commit with the audit row: what the row says is true (ADR 0126).
    const { settled } = await terminateRootAndFence(tx, run.id, cmd.reason, now);
    if (!settled) throw new EngineError('repair_refused', `run ${run.id} is no longer open`);
    // How many are fenced is the plan's note (counted under the same locks): the effects applied are the
    // preview's (review 22); what the batches after the commit did is the answer's `afterCommit`.
    return {
      effects: noEffects(),
      // Then the descendants, a bounded batch per transaction: the operator's answer says how many ended,
      // or where it stopped (the audit row has committed either way).
      after: async () => {
        await afterRunSettled(deps.runtime, settled).catch((err: unknown) =>
          deps.runtime.logger.warn({ err, runId: run.id }, 'a terminate repair committed; a listener after it failed'),
        );
        return endDescendants(deps, run.id, cmd.reason, 'after the commit');
      },
    };
  },
  // The same key sent again after a stop between the batches finishes them (the walk goes under the
  // Terminated root, ADR 0125); with nothing left open it ends nothing.
  resume: (deps, cmd, applied) => endDescendants(deps, cmd.target.runId, applied.reason, 'on this replay'),
};

/**
 * A terminate's descendants, ended a bounded batch per transaction ({@link terminateDescendants}): what
 * the operator is told, how many ended, or where it stopped and how to finish. Never throws: the
 * command has committed whatever happens here.
 */
async function endDescendants(deps: RepairDeps, runId: string, reason: string, when: string): Promise<string[]> {
  let ended = 0;
  const runs = (n: number) => `${n} descendant${n === 1 ? '' : 's'}`;
  try {
    ended = await terminateDescendants(deps.runtime, runId, reason, (n) => {
      ended = n;
    });
    return ended > 0 ? [`terminated ${when}: ${runs(ended)}`] : [];
  } catch (err) {
    deps.runtime.logger.warn({ err, runId, ended }, 'a terminate repair stopped between its batches');
    // Without the driver's source excerpt or paths, as the engine's terminate answers (ADR 0125).
    const why = commandFailure(err).message;
    return [
      `the terminate stopped ${when} after ending ${runs(ended)} (${why}); the rest are fenced and run no code: ` +
        'send the same command again (or terminate the run) to finish them now; otherwise the monitor ends them ' +
        `${deps.runtime.config.monitor.unfinished_terminate_after_seconds} s after the fence (ADR 0140)`,
    ];
  }
}

export const expireRepair: RepairHandler<RepairCommandOf<'run.expire'>, RunTarget, PreparedRollback> = {
  prepare: prepareRollback,
  async plan(db, deps, cmd, target, rollback): Promise<RepairPlan> {
    const { run } = target;
    const now = deps.runtime.clock.now();
    const effects: RepairEffects = noEffects();
    const blockers = windingDown(target);
    if (!rollback.ok)
      blockers.push(
        `its rollback cannot be planned (${rollback.error.message}); terminate it, or fix the code and kick`,
      );
    else effects.compensations.push(...rollback.compensations);
    effects.history.push('run.expiry_started');
    const running = await db.actionRun.findMany({
      where: { run_id: run.id, kind: 'action', status: 'Running' },
      orderBy: { sequence: 'asc' },
      select: { sequence: true, name: true },
    });
    for (const s of running) {
      effects.transitions.push({ subject: `step ${s.sequence} (${s.name})`, from: 'Running', to: 'Expired' });
      effects.history.push('action.expired');
    }
    const deadline = cleanupUntil(deps, cmd);
    effects.jobs.push(wake(run.id, now), wake(run.id, deadline));
    // The descendants the expiry asks, each with its event and two wakes: not one already asked, nor what
    // is under it (reviews 64, 65).
    for (const child of await listCancelReach(db, run.id)) {
      effects.history.push(`run.cancel_requested (child ${child})`);
      effects.jobs.push(wake(child, now), wake(child, deadline));
    }
    return { blockers, effects };
  },
  async perform(tx, deps, cmd, { run }, rollback, { now }) {
    if (!rollback.ok) throw new EngineError('repair_refused', rollback.error.message);
    await assertRollbackCurrent(tx, run.id, rollback);
    await bringDeadlineForward(tx, { runId: run.id, now });
    const started = await startExpiryInTransaction(tx, {
      runId: run.id,
      reason: `expired by ${cmd.actor}: ${cmd.reason}`,
      deadline: iso(now),
      plan: rollback,
      cleanupUntil: cleanupUntil(deps, cmd),
      now,
    });
    if (!started) throw new EngineError('repair_refused', `run ${run.id} could not be expired: it is winding down`);
    return {
      after: () =>
        deps.runtime.emit('run.expired', {
          runId: run.id,
          flowName: run.flow_name,
          compensations: rollback.compensations,
        }),
    };
  },
};
