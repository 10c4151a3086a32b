import type { Json } from '../definitions/define-action.ts';
import type { FlowContext } from '../definitions/define-flow.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { findRun } from '../store/find-run.ts';
import { finishRun } from '../store/finish-run.ts';
import { listActionRuns, type DbActionRun } from '../store/list-action-runs.ts';
import { markRunRunning } from '../store/mark-run-running.ts';
import { setStuckReason } from '../store/set-stuck-reason.ts';
import { terminalRunStatuses } from '../store/types.ts';
import { ActionFailedError, serializeError } from './action-failed-error.ts';
import { runStep, type StepResult } from './run-step.ts';
import type { RuntimeDeps } from './runtime-deps.ts';

export type ExecuteOutcome = 'finished' | 'parked' | 'not-open';

/** Why a replay stopped without finishing the run; `reason` is shown to operators when set. */
interface Park {
  reason: string | null;
}

/**
 * Replays a run: recorded steps return their recorded result (or rethrow their recorded failure),
 * the first unrecorded step is scheduled, claimed and run right here (the fast path: a sequential
 * flow pays no queue round trip per step). When a step cannot proceed now, the replay parks: the
 * flow's promise is abandoned, never rejected, so engine control flow never reaches user code.
 */
export async function executeRun(deps: RuntimeDeps, runId: string): Promise<ExecuteOutcome> {
  const run = await findRun(deps.prisma, runId);
  if (!run || (terminalRunStatuses as readonly string[]).includes(run.status)) return 'not-open';
  const flow = deps.registry.flows.get(run.flow_name);
  if (!flow) {
    await setStuckReason(
      deps.prisma,
      runId,
      `unknown_flow: no flow named "${run.flow_name}" is registered on this worker`,
    );
    return 'parked';
  }
  await deps.prisma.$transaction(async (tx) => {
    if (await markRunRunning(tx, runId)) await appendFlowEvent(tx, { runId, type: 'run.running' });
  });

  const recorded = new Map<number, DbActionRun>((await listActionRuns(deps.prisma, runId)).map((r) => [r.sequence, r]));
  let sequence = 0;
  let park: Park | null = null;
  let signalPark: (p: Park) => void = () => undefined;
  const parked = new Promise<Park>((resolve) => (signalPark = resolve));
  const never = <T>() => new Promise<T>(() => undefined);
  const stop = (p: Park) => {
    park ??= p;
    signalPark(p);
  };

  const ctx: FlowContext = {
    runId,
    action: async <I extends Json, O extends Json>(def: { name: string }, input: I): Promise<O> => {
      if (park) return never<O>();
      sequence += 1;
      const seq = sequence;
      const row = recorded.get(seq);
      if (row && row.name !== def.name) {
        stop({
          reason: `replay_blocked: step ${seq} is recorded as "${row.name}" but the code now calls "${def.name}"`,
        });
        return never<O>();
      }
      if (row?.status === 'Completed') return row.output as O;
      if (row?.status === 'Errored') throw new ActionFailedError(row.name, seq, row.error as Json);
      const result: StepResult = await runStep(deps, {
        runId,
        sequence: seq,
        name: def.name,
        input,
        exists: row !== undefined,
      });
      if (result.kind === 'completed') return result.output as O;
      if (result.kind === 'errored') throw new ActionFailedError(def.name, seq, result.error);
      stop({ reason: result.reason });
      return never<O>();
    },
  };

  type Settled = { kind: 'ok'; output: Json } | { kind: 'threw'; error: unknown } | { kind: 'parked'; park: Park };
  const settled: Settled = await Promise.race([
    flow.run(ctx, run.input as Json).then(
      (output): Settled => ({ kind: 'ok', output: output ?? null }),
      (error: unknown): Settled => ({ kind: 'threw', error }),
    ),
    parked.then((p): Settled => ({ kind: 'parked', park: p })),
  ]);

  if (settled.kind === 'parked') {
    if (settled.park.reason) await setStuckReason(deps.prisma, runId, settled.park.reason);
    return 'parked';
  }
  await deps.prisma.$transaction(async (tx) => {
    const status = settled.kind === 'ok' ? 'Completed' : 'Failed';
    const landed =
      settled.kind === 'ok'
        ? await finishRun(tx, { id: runId, status, output: settled.output })
        : await finishRun(tx, { id: runId, status, error: serializeError(settled.error) });
    if (landed) await appendFlowEvent(tx, { runId, type: status === 'Completed' ? 'run.completed' : 'run.failed' });
  });
  return 'finished';
}
