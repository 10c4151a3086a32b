import type { Json } from '../definitions/define-action.ts';
import { EngineError } from '../errors/engine-error.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { assertStorableJson } from '../input/assert-storable-json.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { jsonRules, textRules } from '../input/input-limits.ts';
import { checkSignalPayload } from '../runtime/check-signal-payload.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { insertSignal } from '../store/insert-signal.ts';
import { lockOpenRun } from '../store/lock-open-run.ts';
import { inOperatorTransaction, operatorStatement } from './operator-transaction.ts';

/**
 * Delivers a signal to an open run (buffered until the run waits for it) and wakes the run. A run
 * that has finished, or finishes while this call waits for its row, refuses it as `run_not_open`.
 * A signal the run's flow declared a schema for is checked first (`invalid_input`, nothing written).
 */
export async function signalRun(
  deps: RuntimeDeps,
  runId: string,
  name: string,
  payload: Json,
): Promise<{ signalId: string }> {
  assertUuid(runId, 'runId');
  assertStorableText(name, 'name', textRules(deps.config.limits));
  const rules = jsonRules(deps.config.limits, 'signal_payload_bytes');
  assertStorableJson(payload, 'payload', rules);
  // The run's flow names the schemas; a run that does not exist is reported by the transaction.
  const run = await operatorStatement(deps, () =>
    deps.prisma.flowRun.findUnique({ where: { id: runId }, select: { flow_name: true } }),
  );
  const checked = run ? await checkSignalPayload(deps.registry, { flowName: run.flow_name, name, payload }) : payload;
  if (checked !== payload) assertStorableJson(checked, 'payload', rules);
  const now = deps.clock.now();
  return inOperatorTransaction(
    deps,
    (tx) => signalInTransaction(tx, { runId, name, payload: checked, now }),
    `signal ${name} to run ${runId}`,
  );
}

/** The signal inside the caller's transaction: the open run locked, the signal buffered, a wake sent. */
export async function signalInTransaction(
  tx: Prisma.TransactionClient,
  args: { runId: string; name: string; payload: Json; now: Date },
): Promise<{ signalId: string }> {
  const { runId, name, payload, now } = args;
  // Locked until commit: a terminate waits for this signal, or this signal sees the run finished.
  if (!(await lockOpenRun(tx, runId))) {
    const run = await tx.flowRun.findUnique({ where: { id: runId }, select: { status: true } });
    if (!run) throw new EngineError('run_not_found', `run ${runId} does not exist`);
    throw new EngineError('run_not_open', `run ${runId} is ${run.status}; a finished run takes no signals`);
  }
  const signalId = await insertSignal(tx, { runId, name, payload });
  await appendFlowEvent(tx, { runId, type: 'signal.sent', data: { name, signal: signalId } });
  await enqueueJob(tx, { kind: 'wake-run', runId, availableAt: now });
  return { signalId };
}
