import type { Json } from '../definitions/define-action.ts';
import type { DbFlowRun } from '../store/find-run.ts';
import { listActionRuns } from '../store/list-action-runs.ts';
import { listCompensationRuns } from '../store/list-compensation-runs.ts';
import { isFlowError, serializeError } from './flow-error.ts';
import { createFlowContext } from './replay/create-flow-context.ts';
import { ReplaySession, type Park } from './replay/replay-session.ts';
import type { RuntimeDeps } from './runtime-deps.ts';

export type RollbackPlan =
  | {
      ok: true;
      /** The compensations the run has registered and not yet run: what its rollback will undo. */
      compensations: { actionSequence: number; name: string }[];
      /** How far the replay got: the live step, or the last recorded one if the code would finish. */
      position: number;
      /** The action steps Completed in the rows this plan replayed (ADR 0091: what it could name). */
      completedSteps: number[];
    }
  | { ok: false; error: { name: string; message: string; stack?: string } };

/**
 * Replays an overdue run without writing anything, to find where it stands and what its rollback
 * will undo. It fails when the flow's code throws on replay (it reads something that has gone, or
 * a deploy changed it) or the record no longer matches the code: such a run cannot be expired yet.
 */
export async function planRollback(
  deps: RuntimeDeps,
  run: DbFlowRun,
  opts: { timeoutMs: number },
): Promise<RollbackPlan> {
  const flow = deps.registry.flows.get(run.flow_name);
  if (!flow)
    return { ok: false, error: { name: 'UnknownFlow', message: `no flow named "${run.flow_name}" is registered` } };
  const steps = await listActionRuns(deps.prisma, run.id);
  const compensations = await listCompensationRuns(deps.prisma, run.id);
  const session = new ReplaySession(deps, run, new Map(steps.map((r) => [r.sequence, r])), compensations);
  session.planOnly = true;
  const ctx = createFlowContext(session);

  type Settled =
    { kind: 'returned' } | { kind: 'threw'; error: unknown } | { kind: 'parked'; park: Park } | { kind: 'hung' };
  let timer: NodeJS.Timeout | undefined;
  const settled: Settled = await Promise.race([
    Promise.resolve()
      .then(() => flow.run(ctx, run.input as Json))
      .then(
        (): Settled => ({ kind: 'returned' }),
        (error: unknown): Settled => ({ kind: 'threw', error }),
      ),
    session.parked.then((park): Settled => ({ kind: 'parked', park })),
    // Code that awaits something outside the engine that never answers must not hold up the sweep.
    new Promise<Settled>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'hung' }), opts.timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
  if (settled.kind === 'hung') {
    session.stop({ waitingFor: null, stuckReason: null });
    return {
      ok: false,
      error: {
        name: 'PlanTimedOut',
        message: `the flow's code did not reach its live step within ${opts.timeoutMs} ms of replay (it awaits something outside the engine)`,
      },
    };
  }
  const park = settled.kind === 'parked' ? settled.park : session.park;
  if (park?.abort !== undefined) throw park.abort instanceof Error ? park.abort : new Error(JSON.stringify(park.abort));
  if (park?.stuckReason) return { ok: false, error: { name: 'ReplayBlocked', message: park.stuckReason } };
  // The code's own throw while replaying its record: the rollback cannot be planned.
  if (!park && settled.kind === 'threw' && !isFlowError(settled.error))
    return { ok: false, error: serializeError(settled.error) };
  // A rollback level already under way: its compensations not yet done come first, then the rest.
  const level = session.levelInProgress;
  const inProgress = level
    ? level.items.filter(
        (_, ordinal) =>
          compensations.find((r) => r.rollback_level === level.level && r.ordinal === ordinal)?.status !== 'Completed',
      )
    : [];
  return {
    ok: true,
    compensations: [...inProgress, ...[...session.compensations].reverse()].map((c) => ({
      actionSequence: c.actionSequence,
      name: c.name,
    })),
    position: session.sequence,
    completedSteps: steps.filter((r) => r.kind === 'action' && r.status === 'Completed').map((r) => r.sequence),
  };
}
