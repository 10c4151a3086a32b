import { EngineError, toEngineError } from '../errors/engine-error.ts';
import { hasInboxMessage } from '../store/has-inbox-message.ts';
import { insertInboxMessage } from '../store/insert-inbox-message.ts';
import { insertProcessTransition } from '../store/insert-process-transition.ts';
import { listSkippedMessages } from '../store/list-skipped-messages.ts';
import { lockSagaInstance } from '../store/lock-saga-instance.ts';
import { releaseSagaInstance } from '../store/release-saga-instance.ts';
import { applyDecision } from './apply-decision.ts';
import { decide } from './decide.ts';
import { decodeStateOrThrow } from './decode-state.ts';
import { deliverInTransaction } from './deliver-in-transaction.ts';
import { inTransaction, type ProcessDeps } from './process-deps.ts';
import { requireInstanceId, requireText } from './run-operator-command.ts';
import { withStoreRetry } from './store-retry.ts';

export interface ReleaseOptions {
  /** retry: deliver the message it stopped on again; skip: mark that message handled without applying it. */
  mode: 'retry' | 'skip';
  operator: string;
  reason: string;
}

export interface ReleaseResult {
  mode: 'retry' | 'skip';
  /** The message the instance had stopped on. */
  messageId: string;
  /** For retry: what the message did (applied, or ignored as no longer valid in the state). */
  outcome: 'applied' | 'ignored' | 'skipped';
  from: string;
  to: string;
  /** Messages the instance skipped while quarantined, then applied by this release in arrival order. */
  resumed: { messageId: string; outcome: string }[];
}

/**
 * Resumes a quarantined instance at the message it stopped on, in one transaction with its audit row
 * (outcome `repair`). A retry that fails again rolls back whole: the instance stays QUARANTINED,
 * untouched, and this throws `release_failed`. The messages it skipped while quarantined were kept
 * (payload in their history row) and are then delivered, in arrival order, in the same transaction:
 * nothing addressed to the instance is lost. If one of them fails, the whole release rolls back and
 * `release_failed` names it. Its armed timers fire on the next sweep.
 */
export async function releaseInstance(
  deps: ProcessDeps,
  instanceId: string,
  opts: ReleaseOptions,
): Promise<ReleaseResult> {
  const id = requireInstanceId(instanceId);
  if (opts.mode !== 'retry' && opts.mode !== 'skip')
    throw new EngineError('invalid_input', 'mode must be "retry" or "skip"');
  const operator = requireText(opts.operator, 'operator');
  const reason = requireText(opts.reason, 'reason');
  const audit = { release: opts.mode, operator, reason };

  const attempt = () =>
    inTransaction(deps, async (tx): Promise<ReleaseResult> => {
      const now = deps.clock.now();
      const row = await lockSagaInstance(tx, { id });
      if (!row) throw new EngineError('instance_not_found', `no instance ${id}`);
      const def = deps.definitions.get(row.process_name);
      if (!def) throw new EngineError('unknown_process', `no process named "${row.process_name}" is registered`);
      if (row.status !== 'QUARANTINED' || row.failure_redelivery_key === null || row.failure_message_type === null)
        throw new EngineError('instance_not_quarantined', `instance ${id} is ${row.status}, not QUARANTINED`);
      const messageId = row.failure_redelivery_key;
      const messageType = row.failure_message_type;
      const at = row.current_state;
      const auditRow = (to: string, extra: Record<string, string>) =>
        insertProcessTransition(tx, {
          instanceId: id,
          from: at,
          to,
          messageId,
          messageType,
          outcome: 'repair',
          detail: { ...audit, ...extra },
          now,
        });
      const resume = async (done: Omit<ReleaseResult, 'resumed'>): Promise<ReleaseResult> => {
        const resumed: ReleaseResult['resumed'] = [];
        for (const kept of await listSkippedMessages(tx, { instanceId: id, consumer: def.name })) {
          try {
            const r = await deliverInTransaction(
              tx,
              deps,
              def,
              { id: kept.messageId, type: kept.messageType, payload: kept.payload },
              { id },
            );
            resumed.push({ messageId: kept.messageId, outcome: r.outcome });
          } catch (err) {
            throw new EngineError(
              'release_failed',
              `instance ${id} was released, but ${kept.messageType} ${kept.messageId}, skipped while it was quarantined, failed when applied: ${toEngineError(err).message}; nothing was changed`,
              { cause: err },
            );
          }
        }
        return { ...done, resumed };
      };
      const alreadyHandled = await hasInboxMessage(tx, { consumer: def.name, messageId });
      if (opts.mode === 'skip' || alreadyHandled) {
        if (!alreadyHandled)
          await insertInboxMessage(tx, { consumer: def.name, messageId, messageType, instanceId: id, now });
        if (!(await releaseSagaInstance(tx, { id, expectedVersion: row.version, now })))
          throw new EngineError('version_conflict', `instance ${id} changed under its lock`);
        await auditRow(at, { skipped: messageId });
        return resume({ mode: opts.mode, messageId, outcome: 'skipped', from: at, to: at });
      }
      try {
        const schema = def.messages[messageType];
        if (!schema) throw new EngineError('invalid_input', `"${messageType}" is no longer a message of "${def.name}"`);
        const payload = schema.parse(row.failure_payload);
        const data = decodeStateOrThrow(def, row.state, id);
        const decision = decide(def, { state: at, data }, { type: messageType, payload }, { key: row.correlation_key });
        if (decision.kind === 'ignored') {
          await insertInboxMessage(tx, { consumer: def.name, messageId, messageType, instanceId: id, now });
          if (!(await releaseSagaInstance(tx, { id, expectedVersion: row.version, now })))
            throw new EngineError('version_conflict', `instance ${id} changed under its lock`);
          await auditRow(at, { ignored: decision.reason });
          return await resume({ mode: 'retry', messageId, outcome: 'ignored', from: at, to: at });
        }
        await applyDecision(tx, deps, def, row, { id: messageId, type: messageType }, decision, {
          outcome: 'applied',
          detail: { release: 'retry' },
        });
        await auditRow(decision.to, {});
        return await resume({ mode: 'retry', messageId, outcome: 'applied', from: at, to: decision.to });
      } catch (err) {
        const e = toEngineError(err);
        if (e.code === 'version_conflict' || e.code === 'release_failed') throw e;
        throw new EngineError('release_failed', `retrying ${messageId} on instance ${id} failed again: ${e.message}`, {
          cause: err,
        });
      }
    });
  return withStoreRetry(deps.storeRetry, attempt, deps.sleep);
}
