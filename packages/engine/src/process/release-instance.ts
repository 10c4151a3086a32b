import type { Json } from '../definitions/define-action.ts';
import { EngineError, toEngineError } from '../errors/engine-error.ts';
import { validateAgainstSchema } from '../input/validate-against-schema.ts';
import { hasInboxMessage } from '../store/has-inbox-message.ts';
import { insertInboxMessage } from '../store/insert-inbox-message.ts';
import { insertProcessTransition } from '../store/insert-process-transition.ts';
import { countKeptMessages } from '../store/count-kept-messages.ts';
import { listSkippedMessages } from '../store/list-skipped-messages.ts';
import { lockSagaInstance } from '../store/lock-saga-instance.ts';
import { writeInstanceFailure } from '../store/write-instance-failure.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import type { DbSagaInstance } from '../store/lock-saga-instance.ts';
import { releaseSagaInstance } from '../store/release-saga-instance.ts';
import { applyDecision } from './apply-decision.ts';
import { decide } from './decide.ts';
import { decodeStateOrThrow } from './decode-state.ts';
import { errorMessage, errorType } from './record-failure.ts';
import { deliverInTransaction } from './deliver-in-transaction.ts';
import { inTransaction, type ProcessDeps } from './process-deps.ts';
import { requireInstanceId, requireText } from './run-operator-command.ts';
import { withStoreRetry } from './store-retry.ts';

export interface ReleaseOptions {
  /**
   * retry: deliver the message it stopped on again; skip: mark that message handled without applying
   * it. Skipped is kept: the message (id, type, payload, position, failure) is in the release's
   * `repair` history row, `detail.skippedMessage`.
   */
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
  /**
   * A kept message that failed as the release applied it: the instance is QUARANTINED again, on it
   * (release it again to retry or skip it). Null when every kept message went through.
   */
  stoppedOn: { messageId: string; messageType: string; errorType: string; message: string } | null;
}

/**
 * Resumes a quarantined instance at the message it stopped on, in one transaction with its audit row
 * (outcome `repair`). A retry that fails again rolls back whole: the instance stays QUARANTINED,
 * untouched, and this throws `release_failed`. The messages it skipped while quarantined were kept
 * (payload in their history row) and are then delivered, in arrival order, in the same transaction:
 * nothing addressed to the instance is lost. One that fails (or that the deployed schema refuses)
 * quarantines the instance again on it, keeping what came before (`stoppedOn`). Its armed timers
 * fire on the next sweep.
 */
export async function releaseInstance(
  deps: ProcessDeps,
  instanceId: string,
  opts: ReleaseOptions,
): Promise<ReleaseResult> {
  const id = requireInstanceId(instanceId);
  if (typeof opts !== 'object' || opts === null) throw new EngineError('invalid_input', 'options: must be an object');
  if (opts.mode !== 'retry' && opts.mode !== 'skip')
    throw new EngineError('invalid_input', 'mode must be "retry" or "skip"');
  const operator = requireText(opts.operator, 'operator', deps.limits);
  const reason = requireText(opts.reason, 'reason', deps.limits);

  const kept = await countKeptMessages(deps.prisma, id);
  const attempt = () =>
    inTransaction(
      deps,
      (tx) => releaseInTransaction(tx, deps, id, { mode: opts.mode, operator, reason }),
      releaseHoldMs(deps.transactionTimeoutMs, kept),
    );
  return withStoreRetry(deps.storeRetry, attempt, deps.sleep);
}

/**
 * What a release's transaction may take per message it kept, beyond the limit: a fixed part, and a part per
 * KiB of the instance's stored state, which each kept message decodes, decides and writes again. Review 61
 * measured about 80 ms per kept message with a state of 4,000 order lines and 16 ms with 1,000 (a loaded
 * 2-core machine); these allow about 3 to 4 times that.
 */
export const keptMessageAllowanceMs = 25;
export const keptMessageAllowancePerKiBMs = 2;

/**
 * How long a release's transaction may hold its connection: the transaction limit, and an allowance per
 * kept message it applies in the same transaction ({@link keptMessageAllowanceMs}, plus
 * {@link keptMessageAllowancePerKiBMs} per KiB of state). Each statement is still bounded by the limit, and
 * the instance's row waited for at most half of it. Review 58: 600 kept messages made every release of a
 * 500 ms limit time out whole, and nothing else gets an instance out of quarantine (ADR 0134).
 */
export function releaseHoldMs(limitMs: number, kept: { kept: number; stateBytes: number }): number {
  const perMessage = keptMessageAllowanceMs + Math.ceil(kept.stateBytes / 1024) * keptMessageAllowancePerKiBMs;
  return limitMs + kept.kept * perMessage;
}

/**
 * The release inside the caller's transaction (a repair's, which already holds the instance row):
 * the instance locked, the message it stopped on retried or skipped, the kept messages resumed, the
 * audit history row (outcome `repair`). Throws (for the caller to roll back) what releaseInstance
 * documents. Input is already validated.
 */
export async function releaseInTransaction(
  tx: Prisma.TransactionClient,
  deps: ProcessDeps,
  id: string,
  opts: ReleaseOptions,
): Promise<ReleaseResult> {
  const audit = { release: opts.mode, operator: opts.operator, reason: opts.reason };
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
  const auditRow = (to: string, extra: Record<string, Json>) =>
    insertProcessTransition(tx, {
      instanceId: id,
      processName: row.process_name,
      from: at,
      to,
      messageId,
      messageType,
      outcome: 'repair',
      detail: { ...audit, ...extra },
      now,
    });
  const resume = async (done: Omit<ReleaseResult, 'resumed' | 'stoppedOn'>): Promise<ReleaseResult> => {
    const resumed: ReleaseResult['resumed'] = [];
    for (const kept of await listSkippedMessages(tx, { instanceId: id, consumer: def.name })) {
      // Each kept message under its own savepoint: one that fails now (a poison message, or a
      // payload the deployed schema refuses) quarantines the instance again on it, and what the
      // release did before it stays done.
      await tx.$executeRawUnsafe('savepoint sagaflow_kept_message');
      try {
        const schema = def.messages[kept.messageType];
        if (!schema)
          throw new EngineError('invalid_input', `"${kept.messageType}" is no longer a message of "${def.name}"`);
        const payload = await validateAgainstSchema(schema, kept.payload, 'message.payload');
        const r = await deliverInTransaction(
          tx,
          deps,
          def,
          { id: kept.messageId, type: kept.messageType, payload, received: kept.payload, position: kept.position },
          { id },
        );
        await tx.$executeRawUnsafe('release savepoint sagaflow_kept_message');
        resumed.push({ messageId: kept.messageId, outcome: r.outcome });
      } catch (err) {
        await tx.$executeRawUnsafe('rollback to savepoint sagaflow_kept_message');
        const stoppedOn = await quarantineAgain(tx, deps, id, kept, err, now);
        return { ...done, resumed, stoppedOn };
      }
    }
    return { ...done, resumed, stoppedOn: null };
  };
  const alreadyHandled = await hasInboxMessage(tx, { consumer: def.name, messageId });
  if (opts.mode === 'skip' || alreadyHandled) {
    if (!alreadyHandled)
      await insertInboxMessage(tx, { consumer: def.name, messageId, messageType, instanceId: id, now });
    if (!(await releaseSagaInstance(tx, { id, expectedVersion: row.version, now })))
      throw new EngineError('version_conflict', `instance ${id} changed under its lock`);
    // Skipped means kept: the message (payload, position, failure) stays in the audit row, since
    // the release clears the failure record that held it.
    await auditRow(at, { skipped: messageId, skippedMessage: skippedMessageOf(row) });
    return resume({ mode: opts.mode, messageId, outcome: 'skipped', from: at, to: at });
  }
  try {
    const schema = def.messages[messageType];
    if (!schema) throw new EngineError('invalid_input', `"${messageType}" is no longer a message of "${def.name}"`);
    const payload = await validateAgainstSchema(schema, row.failure_payload, 'message.payload');
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
    // The move is the message's `applied` row just written; the audit row records the release at the state
    // it found, so one transition is one row among the applied and repair rows (review 29).
    await auditRow(at, { appliedTo: decision.to });
    return await resume({ mode: 'retry', messageId, outcome: 'applied', from: at, to: decision.to });
  } catch (err) {
    const e = toEngineError(err);
    if (e.code === 'version_conflict' || e.code === 'release_failed') throw e;
    throw new EngineError('release_failed', `retrying ${messageId} on instance ${id} failed again: ${e.message}`, {
      cause: err,
    });
  }
}

/** The message a quarantined instance stopped on, whole, as a skip release records it in its audit row. */
function skippedMessageOf(row: DbSagaInstance): Json {
  return {
    id: row.failure_redelivery_key,
    type: row.failure_message_type,
    payload: (row.failure_payload ?? null) as Json,
    position: row.failure_position === null ? null : String(row.failure_position),
    errorType: row.failure_error_type,
    message: row.failure_message,
    firstFailedAt: row.first_failed_at?.toISOString() ?? null,
  };
}

/** Quarantines a just-released instance again, on a kept message that failed as the release applied it. */
async function quarantineAgain(
  tx: Prisma.TransactionClient,
  deps: ProcessDeps,
  id: string,
  kept: { messageId: string; messageType: string; payload: unknown; position: bigint | null },
  err: unknown,
  now: Date,
): Promise<NonNullable<ReleaseResult['stoppedOn']>> {
  const row = await lockSagaInstance(tx, { id });
  if (!row) throw new EngineError('instance_not_found', `no instance ${id}`);
  const failure = { errorType: errorType(err), message: errorMessage(err) };
  const written = await writeInstanceFailure(tx, {
    id,
    expectedVersion: row.version,
    record: {
      redeliveryKey: kept.messageId,
      messageType: kept.messageType,
      payload: kept.payload,
      position: kept.position,
      ...failure,
      firstFailedAt: now,
    },
    quarantine: true,
    now,
  });
  if (!written) throw new EngineError('version_conflict', `instance ${id} changed under its lock`);
  await insertProcessTransition(tx, {
    instanceId: id,
    processName: row.process_name,
    from: row.current_state,
    to: row.current_state,
    messageId: kept.messageId,
    messageType: kept.messageType,
    outcome: 'quarantined',
    detail: { errorType: failure.errorType, during: 'release' },
    now,
  });
  deps.logger.warn(
    { instanceId: id, messageId: kept.messageId, err },
    'a message kept during quarantine failed as the release applied it; the instance is quarantined on it',
  );
  return { messageId: kept.messageId, messageType: kept.messageType, ...failure };
}
