import { toStorableDiagnostic } from '../input/to-storable-diagnostic.ts';
import { serializeError } from '../runtime/flow-error.ts';
import { hasInboxMessage } from '../store/has-inbox-message.ts';
import { insertProcessTransition } from '../store/insert-process-transition.ts';
import { insertSagaInstance } from '../store/insert-saga-instance.ts';
import { lockSagaInstance } from '../store/lock-saga-instance.ts';
import { writeInstanceFailure } from '../store/write-instance-failure.ts';
import { checkStateToStore } from './decode-state.ts';
import { startsInstance, type ProcessDefinition } from './define-process.ts';
import type { ParsedMessage } from './parse-message.ts';
import { inTransaction, type ProcessDeps } from './process-deps.ts';
import { withStoreRetry } from './store-retry.ts';

/** What a failure did to the record: see seed 002's rules, one branch each. */
export type FailureRecording = 'nothing' | 'recorded' | 'unchanged' | 'quarantined';

const maxMessageLength = 1000;

export function errorType(err: unknown): string {
  if (err instanceof Error) {
    // Never throws: a getter that throws is described as the flows' records describe it (ADR 0108).
    try {
      const code = (err as { code?: unknown }).code;
      const name: unknown =
        typeof code === 'string' && err.name === 'EngineError'
          ? `EngineError:${code}`
          : err.name || err.constructor.name;
      if (typeof name === 'string') return toStorableDiagnostic(name);
    } catch {
      // described below
    }
    return serializeError(err).name;
  }
  return typeof err;
}

/**
 * The failure record's message: cut to 1,000 characters, then made storable (a NUL or a lone
 * surrogate, the error's own or left by the cut through a pair, becomes U+FFFD), so the record of a
 * failure can always be written. It is our diagnostic, not caller input: sanitised, not refused.
 * Never throws: the text is `serializeError`'s, which describes a value without a usable toString (a
 * null-prototype object) instead of calling it (review 39, as review 35 found for flows).
 */
export function errorMessage(err: unknown): string {
  const text = serializeError(err).message;
  return toStorableDiagnostic(text.length > maxMessageLength ? text.slice(0, maxMessageLength) : text);
}

/**
 * Seed 002's failure record, in its own transaction after the delivery rolled back. First failure:
 * write the record (the caller rethrows). Same message again inside the budget: write nothing.
 * Another message: rewrite the record, keep firstFailedAt. Past the budget: quarantine on this
 * message (the caller returns normally). Quarantine off, an instance that cannot be found or created,
 * or a lost compare-and-set: nothing (the next failure tries again).
 */
export async function recordFailure(
  deps: ProcessDeps,
  def: ProcessDefinition,
  key: string,
  message: ParsedMessage,
  err: unknown,
): Promise<{ recording: FailureRecording; instanceId: string | null }> {
  const budget = deps.quarantineAfterMs;
  if (budget === null) return { recording: 'nothing', instanceId: null };
  return withStoreRetry(
    deps.storeRetry,
    () =>
      inTransaction(deps, async (tx): Promise<{ recording: FailureRecording; instanceId: string | null }> => {
        const nothing = { recording: 'nothing', instanceId: null } as const;
        await deps.faults.beforeFailureRecord?.({ messageId: message.id });
        const now = deps.clock.now();
        let row = await lockSagaInstance(tx, { processName: def.name, key });
        if (!row) {
          // A message that fails before its instance exists creates the instance to hold the record.
          if (!startsInstance(def, message.type)) return nothing;
          const initialData = def.initialData(key);
          // Not with data its schema refuses: an instance that can never decode is no place for a record.
          checkStateToStore(def, initialData, `for key "${key}"`, def.initial);
          await insertSagaInstance(tx, {
            processName: def.name,
            key,
            state: def.initial,
            data: initialData,
            now,
          });
          row = await lockSagaInstance(tx, { processName: def.name, key });
          if (!row) return nothing;
        }
        if (row.status !== 'ACTIVE') return nothing;
        // Seed 002: a failing message the instance already counts as handled records nothing (another
        // worker applied it while this one failed on it; a record naming it would never be cleared).
        if (await hasInboxMessage(tx, { consumer: def.name, messageId: message.id })) return nothing;
        const id = row.id;
        const record = {
          redeliveryKey: message.id,
          messageType: message.type,
          // As sent: a release parses it again with the deployed schema.
          payload: message.received,
          position: message.position,
          errorType: errorType(err),
          message: errorMessage(err),
        };
        if (row.first_failed_at === null) {
          const ok = await writeInstanceFailure(tx, {
            id: row.id,
            expectedVersion: row.version,
            record: { ...record, firstFailedAt: now },
            quarantine: false,
            now,
          });
          return ok ? { recording: 'recorded', instanceId: id } : nothing;
        }
        const firstFailedAt = row.first_failed_at;
        if (now.getTime() - firstFailedAt.getTime() >= budget) {
          const ok = await writeInstanceFailure(tx, {
            id: row.id,
            expectedVersion: row.version,
            record: { ...record, firstFailedAt },
            quarantine: true,
            now,
          });
          if (!ok) return nothing;
          await insertProcessTransition(tx, {
            instanceId: row.id,
            processName: row.process_name,
            from: row.current_state,
            to: row.current_state,
            messageId: message.id,
            messageType: message.type,
            outcome: 'quarantined',
            detail: { errorType: record.errorType, firstFailedAt: firstFailedAt.toISOString() },
            now,
          });
          return { recording: 'quarantined', instanceId: id };
        }
        if (row.failure_redelivery_key === message.id) return { recording: 'unchanged', instanceId: id };
        const ok = await writeInstanceFailure(tx, {
          id: row.id,
          expectedVersion: row.version,
          record: { ...record, firstFailedAt },
          quarantine: false,
          now,
        });
        return ok ? { recording: 'recorded', instanceId: id } : nothing;
      }),
    deps.sleep,
  );
}
