import { EngineError } from '../errors/engine-error.ts';
import { describeBadText } from '../input/describe-bad-text.ts';
import type { ProcessDefinition } from './define-process.ts';
import { deliverInTransaction, type DeliverResult } from './deliver-in-transaction.ts';
import { parseMessage, type IncomingMessage } from './parse-message.ts';
import { definitionOf, inTransaction, isHeldUp, type ProcessDeps } from './process-deps.ts';
import { recordFailure } from './record-failure.ts';
import { journalHeldUpDelivery } from '../store/journal-held-up-delivery.ts';
import { withStoreRetry } from './store-retry.ts';

/**
 * The longest correlation key, in bytes of UTF-8: an instance's key is indexed with its process name,
 * and an index entry holds at most about 2,700 bytes. 1,024 leaves room for any sane process name.
 */
export const maxCorrelationKeyBytes = 1024;

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
  // The key is an entry of the instances' unique index, which PostgreSQL caps at about 2,700 bytes:
  // a longer one failed inside the transaction as a driver error (review 39). Refused before any write.
  const keyBytes = Buffer.byteLength(key, 'utf8');
  if (keyBytes > maxCorrelationKeyBytes)
    throw new EngineError(
      'invalid_input',
      `process "${def.name}": message ${message.id} correlates to an instance key of ${keyBytes} bytes; a correlation key is at most ${maxCorrelationKeyBytes} bytes (UTF-8)`,
      { field: 'correlationKey' },
    );
  try {
    return await withStoreRetry(
      deps.storeRetry,
      () => inTransaction(deps, (tx) => deliverInTransaction(tx, deps, def, message, { key })),
      deps.sleep,
    );
  } catch (err) {
    if (isHeldUp(err)) {
      deps.logger.warn(
        { err, process: def.name, key, messageId: message.id },
        'message not delivered: its instance is held by another session past the transaction limit (processes.transaction_timeout_ms); nothing was written and no failure is recorded; deliver it again',
      );
      // Journaled through the engine's own pool, outside a host's transaction (which may roll back).
      await journalHeldUpDelivery(deps.journal ?? deps.prisma, {
        processName: def.name,
        key,
        messageId: message.id,
        messageType: message.type,
        limitMs: deps.transactionTimeoutMs,
      }).catch((journalErr: unknown) =>
        deps.logger.warn({ err: journalErr, process: def.name, key }, 'could not journal a held-up delivery'),
      );
      throw err;
    }
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
