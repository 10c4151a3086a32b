import { EngineError } from '../errors/engine-error.ts';
import { describeBadText } from '../input/describe-bad-text.ts';
import type { ProcessDefinition } from './define-process.ts';
import { deliverInTransaction, type DeliverResult } from './deliver-in-transaction.ts';
import { parseMessage, type IncomingMessage } from './parse-message.ts';
import { definitionOf, inTransaction, type ProcessDeps } from './process-deps.ts';
import { recordFailure } from './record-failure.ts';
import { withStoreRetry } from './store-retry.ts';

/**
 * Delivers one message to its process instance in ONE transaction (inbox, lock, expected state,
 * state save, outbox, history), retrying transient store errors first. A failure then follows seed
 * 002: recorded and rethrown, or, past the quarantine budget, the instance is quarantined and this
 * returns normally with outcome `quarantined`. Bad input is refused before any write.
 */
export async function deliverMessage(
  deps: ProcessDeps,
  process: string | ProcessDefinition,
  raw: IncomingMessage,
): Promise<DeliverResult> {
  const def = definitionOf(deps, process);
  const message = await parseMessage(def, raw, deps.limits);
  // A correlation that throws is an unroutable failure: it records nothing (seed 002).
  const key = def.correlate({ id: message.id, type: message.type, payload: message.payload });
  if (typeof key !== 'string' || key === '') {
    throw new EngineError(
      'invalid_input',
      `process "${def.name}": message ${message.id} correlates to no instance key`,
    );
  }
  const badKey = describeBadText(key);
  if (badKey)
    throw new EngineError(
      'invalid_input',
      `process "${def.name}": message ${message.id} correlates to a key the database cannot store: ${badKey}`,
    );
  try {
    return await withStoreRetry(
      deps.storeRetry,
      () => inTransaction(deps, (tx) => deliverInTransaction(tx, deps, def, message, { key })),
      deps.sleep,
    );
  } catch (err) {
    const recorded = await recordFailure(deps, def, key, message, err).catch((recordErr: unknown) => {
      deps.logger.warn(
        { err: recordErr, process: def.name, messageId: message.id },
        'could not write the failure record',
      );
      return { recording: 'nothing' as const, instanceId: null };
    });
    if (recorded.recording === 'quarantined') {
      deps.logger.warn({ err, process: def.name, key, messageId: message.id }, 'process instance quarantined');
      return { outcome: 'quarantined', instanceId: recorded.instanceId };
    }
    throw err;
  }
}
