import type { Json } from '../definitions/define-action.ts';
import { EngineError } from '../errors/engine-error.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { insertInboxMessage } from '../store/insert-inbox-message.ts';
import { insertOutboxMessage } from '../store/insert-outbox-message.ts';
import { insertProcessTimeout } from '../store/insert-process-timeout.ts';
import { insertProcessTransition } from '../store/insert-process-transition.ts';
import type { DbSagaInstance } from '../store/lock-saga-instance.ts';
import { saveSagaInstance } from '../store/save-saga-instance.ts';
import type { Decision } from './decide.ts';
import type { ProcessDefinition } from './define-process.ts';
import { checkDecisionToStore } from './check-decision.ts';
import type { ProcessDeps } from './process-deps.ts';

/**
 * A part of a command id with its `%` and `/` escaped (as in a URL path), so the parts' boundaries are
 * unambiguous. A part holding neither is unchanged (ADR 0101).
 */
const idPart = (part: string) => part.replace(/%/g, '%25').replace(/\//g, '%2F');

/**
 * The outbox id of the `index`-th command caused by a message: the same on every retry of it, and never
 * the same for two (process, message) pairs, whatever their names hold (review 29).
 */
export function commandMessageId(processName: string, causationId: string, index: number): string {
  return `${idPart(processName)}/${idPart(causationId)}/${index}`;
}

/**
 * Writes an applied decision inside the caller's transaction (which holds the instance lock): armed
 * timeouts, the state save (version-checked), outbox rows, the inbox record and the history row.
 */
export async function applyDecision(
  tx: Prisma.TransactionClient,
  deps: ProcessDeps,
  def: ProcessDefinition,
  row: DbSagaInstance,
  message: { id: string; type: string },
  decision: Decision & { kind: 'applied' },
  history: { outcome: 'applied' | 'repair'; detail: Json | null },
): Promise<void> {
  // Before any write: state the schema refuses would leave the instance undecodable for good, and a
  // command or timer JSON cannot hold would be sent or armed as something the process never decided.
  checkDecisionToStore(def, decision, row.id, deps.limits);
  const now = deps.clock.now();
  // Entering a state starts a new visit to it; a transition to the state the instance is in does not.
  const stateVisit = decision.to === decision.from ? row.state_visit : row.state_visit + 1;
  for (const t of decision.timeouts) {
    await insertProcessTimeout(tx, {
      instanceId: row.id,
      name: t.name,
      expectedState: t.expectedState,
      armedVisit: stateVisit,
      payload: t.payload,
      dueAt: new Date(now.getTime() + t.afterMs),
      now,
    });
  }
  const saved = await saveSagaInstance(tx, {
    id: row.id,
    expectedVersion: row.version,
    state: decision.to,
    stateVisit,
    data: decision.data,
    status: decision.completes ? 'COMPLETED' : 'ACTIVE',
    messageId: message.id,
    now,
  });
  if (!saved) throw new EngineError('version_conflict', `instance ${row.id} changed under its lock; delivery retried`);
  for (const [i, c] of decision.commands.entries()) {
    await insertOutboxMessage(tx, {
      messageId: commandMessageId(def.name, message.id, i),
      sourceKind: 'process',
      sourceId: row.id,
      type: c.type,
      destination: c.destination,
      payload: c.payload,
      headers: {
        ...c.headers,
        'sagaflow-process': def.name,
        'sagaflow-instance': row.id,
        'sagaflow-causation-id': message.id,
      },
      now,
    });
  }
  await deps.faults.afterOutbox?.(tx, { instanceId: row.id, messageId: message.id });
  await insertInboxMessage(tx, {
    consumer: def.name,
    messageId: message.id,
    messageType: message.type,
    instanceId: row.id,
    now,
  });
  await insertProcessTransition(tx, {
    instanceId: row.id,
    processName: row.process_name,
    from: decision.from,
    to: decision.to,
    messageId: message.id,
    messageType: message.type,
    outcome: history.outcome,
    detail: decision.late ? { ...(history.detail as object | null), late: true } : history.detail,
    now,
  });
}
