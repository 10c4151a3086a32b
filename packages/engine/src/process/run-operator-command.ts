import type { Json } from '../definitions/define-action.ts';
import { EngineError, thrownText } from '../errors/engine-error.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import type { Db } from '../store/types.ts';
import { assertStorableJson } from '../input/assert-storable-json.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { defaultInputLimits, jsonRules, textRules, type InputLimits } from '../input/input-limits.ts';
import { validateAgainstSchema } from '../input/validate-against-schema.ts';
import { findHandledOperatorCommand } from '../store/find-handled-operator-command.ts';
import { sameJson } from '../input/same-json.ts';
import { lockSagaInstance } from '../store/lock-saga-instance.ts';
import { applyDecision } from './apply-decision.ts';
import { applied, type Decision } from './decide.ts';
import type { ProcessDefinition } from './define-process.ts';
import { decodeStateOrThrow } from './decode-state.ts';
import { definitionOf, inTransaction, type ProcessDeps } from './process-deps.ts';
import { withStoreRetry } from './store-retry.ts';

/** A typed repair, as seed 004 asks: expected state, who, why, and a fresh idempotency key. */
export interface OperatorCommand {
  command: string;
  input: unknown;
  /** The state the operator saw; if the instance moved since, the command changes nothing. */
  expectedState: string;
  operator: string;
  reason: string;
  idempotencyKey: string;
}

export type OperatorCommandResult =
  | { outcome: 'applied'; from: string; to: string; commands: number }
  | { outcome: 'duplicate' }
  | {
      outcome: 'rejected';
      reason: 'expected_state_changed' | 'not_allowed_in_state' | 'quarantined';
      currentState: string;
    };

export function requireInstanceId(instanceId: unknown): string {
  return assertUuid(instanceId, 'instanceId');
}

/** A required text field the database stores as given (no NUL, no lone surrogate, within the limit). */
export function requireText(value: unknown, field: string, limits: InputLimits = defaultInputLimits): string {
  return assertStorableText(value, field, textRules(limits));
}

/**
 * Validates an operator command before any read or write, its input by the command's schema (any
 * Standard Schema validator, which may be asynchronous); the error names the field.
 */
export async function parseOperatorCommand(
  def: ProcessDefinition,
  instanceId: string,
  cmd: OperatorCommand,
  limits: InputLimits = defaultInputLimits,
) {
  const id = requireInstanceId(instanceId);
  if (typeof cmd !== 'object' || cmd === null) throw new EngineError('invalid_input', 'command: must be an object');
  const spec = Object.hasOwn(def.operatorCommands, cmd.command) ? def.operatorCommands[cmd.command] : undefined;
  const schema = def.operatorInputs[cmd.command];
  if (!spec || !schema)
    throw new EngineError('invalid_input', `command: "${cmd.command}" is not an operator command of "${def.name}"`, {
      field: 'command',
    });
  assertStorableJson(cmd.input, 'input', jsonRules(limits, 'message_payload_bytes'));
  const input = await validateAgainstSchema(schema, cmd.input, 'input');
  if (!def.states.includes(cmd.expectedState))
    throw new EngineError('invalid_input', `expectedState: "${cmd.expectedState}" is not a state of "${def.name}"`, {
      field: 'expectedState',
    });
  return {
    id,
    command: cmd.command,
    spec,
    input,
    operator: requireText(cmd.operator, 'operator', limits),
    reason: requireText(cmd.reason, 'reason', limits),
    // Scoped to the instance (one key on two instances is two commands); incoming message ids may
    // not use the `operator:` prefix (parseMessage refuses it), so the two never collide.
    messageId: `operator:${id}:${requireText(cmd.idempotencyKey, 'idempotencyKey', limits)}`,
    messageType: `operator:${cmd.command}`,
  };
}

export type ParsedOperatorCommand = Awaited<ReturnType<typeof parseOperatorCommand>>;

/** Why an operator command cannot apply to this instance as it is now, or null if it can. */
export function checkOperatorCommand(
  row: { status: string; current_state: string },
  expectedState: string,
  spec: { from: readonly string[] },
): (OperatorCommandResult & { outcome: 'rejected' }) | null {
  const currentState = row.current_state;
  if (row.status === 'QUARANTINED') return { outcome: 'rejected', reason: 'quarantined', currentState };
  if (currentState !== expectedState) return { outcome: 'rejected', reason: 'expected_state_changed', currentState };
  // A COMPLETED instance is in a final state, which no transition leaves (the definition refuses such a `from`).
  if (row.status === 'COMPLETED' || !spec.from.includes(currentState))
    return { outcome: 'rejected', reason: 'not_allowed_in_state', currentState };
  return null;
}

/**
 * Applies an operator command through the same lock, transition, outbox and inbox transaction as an
 * automated message; its history row (outcome `repair`) carries the operator and the reason. The
 * idempotency key is its message id: resubmitting it is a no-op.
 */
export async function runOperatorCommand(
  deps: ProcessDeps,
  process: string | ProcessDefinition,
  instanceId: string,
  cmd: OperatorCommand,
): Promise<OperatorCommandResult> {
  const def = definitionOf(deps, process);
  const parsed = await parseOperatorCommand(def, instanceId, cmd, deps.limits);
  return withStoreRetry(
    deps.storeRetry,
    () => inTransaction(deps, (tx) => operatorCommandInTransaction(tx, deps, def, parsed, cmd.expectedState)),
    deps.sleep,
  );
}

/**
 * An operator command inside the caller's transaction (a repair's, which already holds the instance
 * row): lock, inbox check, expected state, then the transition through {@link applyDecision}.
 */
export async function operatorCommandInTransaction(
  tx: Prisma.TransactionClient,
  deps: ProcessDeps,
  def: ProcessDefinition,
  parsed: ParsedOperatorCommand,
  expectedState: string,
): Promise<OperatorCommandResult> {
  const { id, spec, input, operator, reason, messageId, messageType, command } = parsed;
  const row = await lockSagaInstance(tx, { id });
  if (!row || row.process_name !== def.name)
    throw new EngineError('instance_not_found', `no instance ${id} of "${def.name}"`);
  if (await handledAlready(tx, def, parsed)) return { outcome: 'duplicate' };
  const rejected = checkOperatorCommand(row, expectedState, spec);
  if (rejected) return rejected;
  const data = decodeStateOrThrow(def, row.state, row.id);
  const decision = decideOperatorCommand(def, parsed, row, data);
  await applyDecision(tx, deps, def, row, { id: messageId, type: messageType }, decision, {
    outcome: 'repair',
    detail: { operator, reason, command, input: input as Json },
  });
  return { outcome: 'applied', from: decision.from, to: decision.to, commands: decision.commands.length };
}

/**
 * Whether this operator command was already applied under its idempotency key (a duplicate, nothing to
 * do). The same key with another command, or with other input, is not that command: it is refused as
 * `invalid_input` on `idempotencyKey` (ADR 0016), never answered "duplicate" (review 39). Input kept by a
 * history row retention pruned cannot be compared; the command's name still is.
 */
export async function handledAlready(
  db: Db,
  def: ProcessDefinition,
  parsed: Pick<ParsedOperatorCommand, 'id' | 'command' | 'input' | 'messageId' | 'messageType'>,
): Promise<boolean> {
  const prior = await findHandledOperatorCommand(db, {
    consumer: def.name,
    messageId: parsed.messageId,
    instanceId: parsed.id,
  });
  if (!prior) return false;
  if (prior.messageType !== parsed.messageType || (prior.inputKept && !sameJson(prior.input, parsed.input)))
    throw new EngineError(
      'invalid_input',
      `idempotencyKey: already used on instance ${parsed.id} by ${prior.messageType === parsed.messageType ? `"${parsed.command}" with other input` : `"${prior.messageType.replace(/^operator:/, '')}"`}; use a fresh key for another command`,
      { field: 'idempotencyKey' },
    );
  return true;
}

/**
 * The transition an operator command makes from the instance as it is: its `then` (the process's own
 * code) and the timeouts it arms. When that code throws, the command cannot apply now: it is refused
 * (`repair_refused`, the cause named), so a preview reports it as a blocker and a repair as a refusal
 * with its audit row, never as an internal error; nothing is written (review 39).
 */
export function decideOperatorCommand(
  def: ProcessDefinition,
  parsed: Pick<ParsedOperatorCommand, 'command' | 'spec' | 'input'>,
  row: { id: string; current_state: string; correlation_key: string },
  data: unknown,
): Decision & { kind: 'applied' } {
  try {
    const result = parsed.spec.then?.(data, parsed.input, { key: row.correlation_key }) ?? {};
    return applied(def, { state: row.current_state, data }, parsed.spec.to, result, [], false);
  } catch (err) {
    if (err instanceof EngineError) throw err;
    throw new EngineError(
      'repair_refused',
      `operator command "${parsed.command}" on instance ${row.id} fails in its own code now (${thrownText(err)}); nothing changed: fix the cause, then submit it again`,
      { cause: err },
    );
  }
}
