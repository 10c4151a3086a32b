import { sameJson } from '../input/same-json.ts';
import { z } from 'zod';
import type { Json } from '../definitions/define-action.ts';
import { EngineError } from '../errors/engine-error.ts';
import { assertSeconds } from '../input/assert-seconds.ts';
import { assertStorableJson } from '../input/assert-storable-json.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { closestIssue, zodIssueField } from '../input/zod-issue-field.ts';
import { jsonRules, textRules, type InputLimits } from '../input/input-limits.ts';
import { openRunStatuses } from '../store/types.ts';

const stepStatuses = [
  'Pending',
  'Running',
  'Failed',
  'Waiting',
  'Completed',
  'Errored',
  'Expired',
  'Cancelled',
] as const;

/**
 * Who, why, and the key that makes a resubmission return the first result. `via` says how the actor
 * acted when the caller wants it on the audit row (the control plane: `token <name>` for an API token).
 */
const common = {
  actor: z.string(),
  via: z.string().optional(),
  reason: z.string(),
  idempotencyKey: z.string(),
};
const runTarget = z.strictObject({ runId: z.string() });
const stepTarget = z.strictObject({ runId: z.string(), stepSequence: z.number().int().min(1) });
/**
 * One compensation of a run, by its place in the rollback: its level and its position in the level
 * (several compensations may undo one step, so the step's sequence does not name one).
 */
const compensationTarget = z.strictObject({
  runId: z.string(),
  compensation: z.strictObject({ rollbackLevel: z.number().int().min(1), ordinal: z.number().int().min(0) }),
});
const instanceTarget = z.strictObject({ instanceId: z.string() });
/** One outbox row, by its id (the row's `id`, not its `message_id`). */
const outboxTarget = z.strictObject({ outboxId: z.string() });
/** A repair is drafted against an open run: a finished one is never changed (invariant 1). */
const runExpected = z.strictObject({ runStatus: z.enum(openRunStatuses) });
const stepExpected = z.strictObject({
  runStatus: z.enum(openRunStatuses),
  stepStatus: z.enum(stepStatuses),
  stepAttempts: z.number().int().min(0),
});
const instanceExpected = z.strictObject({ state: z.string(), version: z.number().int().min(0) });
/** An outbox row's status and the attempts it has used, as the page or CLI showed them. */
const outboxExpected = z.strictObject({
  status: z.enum(['Pending', 'Published', 'Dead']),
  attempts: z.number().int().min(0),
});

const runCommand = <K extends string, S extends z.core.$ZodLooseShape>(kind: K, extra: S) =>
  z.strictObject({ kind: z.literal(kind), target: runTarget, expected: runExpected, ...common, ...extra });
const stepCommand = <K extends string, S extends z.core.$ZodLooseShape>(kind: K, extra: S) =>
  z.strictObject({ kind: z.literal(kind), target: stepTarget, expected: stepExpected, ...common, ...extra });
/** A command on a Running row, an action step's or a compensation's: its expected state is the row's. */
const stepOrCompensationCommand = <K extends string>(kind: K) =>
  z.strictObject({
    kind: z.literal(kind),
    target: z.union([stepTarget, compensationTarget]),
    expected: stepExpected,
    ...common,
  });
const instanceCommand = <K extends string, S extends z.core.$ZodLooseShape>(kind: K, extra: S) =>
  z.strictObject({ kind: z.literal(kind), target: instanceTarget, expected: instanceExpected, ...common, ...extra });

/**
 * Every repair command, as a discriminated union on `kind`. Each names its target, the state it was
 * drafted against (`expected`), the actor, a reason and an idempotency key; some carry parameters.
 */
export const repairCommandSchema = z.discriminatedUnion('kind', [
  runCommand('run.kick', {}),
  stepCommand('run.retry_step', {}),
  stepOrCompensationCommand('run.reclaim_step'),
  runCommand('run.cancel', { cleanupSeconds: z.number().optional() }),
  runCommand('run.terminate', {}),
  runCommand('run.signal', { signal: z.strictObject({ name: z.string(), payload: z.unknown().optional() }) }),
  runCommand('run.expire', { cleanupSeconds: z.number().optional() }),
  stepCommand('run.complete_step', { output: z.unknown() }),
  stepCommand('run.resume_from_step', {}),
  instanceCommand('instance.release', { mode: z.enum(['retry', 'skip']) }),
  instanceCommand('instance.command', { command: z.string(), input: z.unknown().optional() }),
  instanceCommand('instance.force_transition', { to: z.string() }),
  z.strictObject({ kind: z.literal('outbox.requeue'), target: outboxTarget, expected: outboxExpected, ...common }),
]);

export type RepairCommand = z.output<typeof repairCommandSchema>;
export type RepairKind = RepairCommand['kind'];
export type RepairCommandOf<K extends RepairKind> = Extract<RepairCommand, { kind: K }>;
export type RunRepairCommand = Extract<RepairCommand, { target: { runId: string } }>;
export type InstanceRepairCommand = Extract<RepairCommand, { target: { instanceId: string } }>;
export type OutboxRepairCommand = Extract<RepairCommand, { target: { outboxId: string } }>;
export type CompensationTarget = z.output<typeof compensationTarget>;

/**
 * Validates a repair command before any read: its shape (zod), then every value through the engine's
 * own input guards (ADR 0013): ids are uuids, text is storable and within `limits.text_length`,
 * JSON values are storable and within their size limits. Refused as `invalid_input` naming the field.
 */
export function parseRepairCommand(raw: unknown, limits: InputLimits): RepairCommand {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new EngineError('invalid_input', 'command: must be an object', { field: 'command' });
  const parsed = repairCommandSchema.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    // An unknown kind matches no branch (no errors to choose from); a bad target names its closest one.
    const issue = closestIssue(first);
    const field = zodIssueField(issue, 'command');
    const message =
      issue?.code === 'invalid_union' && field === 'kind'
        ? `must be one of ${repairCommandSchema.options.map((o) => o.shape.kind.value).join(', ')}`
        : (issue?.message ?? 'invalid');
    throw new EngineError('invalid_input', `${field}: ${message}`, { field });
  }
  const cmd = parsed.data;
  const text = textRules(limits);
  assertStorableText(cmd.actor, 'actor', text);
  if (cmd.via !== undefined) assertStorableText(cmd.via, 'via', text);
  assertStorableText(cmd.reason, 'reason', text);
  assertStorableText(cmd.idempotencyKey, 'idempotencyKey', text);
  // Ids in lower case, as the database prints them: the audit row and an approval store them as text.
  if ('runId' in cmd.target) cmd.target.runId = assertUuid(cmd.target.runId, 'target.runId');
  if ('instanceId' in cmd.target) cmd.target.instanceId = assertUuid(cmd.target.instanceId, 'target.instanceId');
  if ('outboxId' in cmd.target) cmd.target.outboxId = assertUuid(cmd.target.outboxId, 'target.outboxId');
  if ('state' in cmd.expected) assertStorableText(cmd.expected.state, 'expected.state', text);
  switch (cmd.kind) {
    case 'run.cancel':
    case 'run.expire':
      if (cmd.cleanupSeconds !== undefined) assertSeconds(cmd.cleanupSeconds, 'cleanupSeconds');
      break;
    case 'run.signal':
      assertStorableText(cmd.signal.name, 'signal.name', text);
      if (cmd.signal.payload !== undefined)
        assertStorableJson(cmd.signal.payload, 'signal.payload', jsonRules(limits, 'signal_payload_bytes'));
      break;
    case 'run.complete_step':
      assertStorableJson(cmd.output, 'output', jsonRules(limits, 'action_output_bytes'));
      break;
    case 'instance.command':
      assertStorableText(cmd.command, 'command', text);
      if (cmd.input !== undefined) assertStorableJson(cmd.input, 'input', jsonRules(limits, 'message_payload_bytes'));
      break;
    case 'instance.force_transition':
      assertStorableText(cmd.to, 'to', text);
      break;
    default:
      break;
  }
  return cmd;
}

/** The command's own parameters (what it carries beyond target, expectation and audit fields), as stored. */
export function repairParams(cmd: RepairCommand): { [key: string]: Json } {
  const {
    kind: _kind,
    target: _target,
    expected: _expected,
    actor: _actor,
    via: _via,
    reason: _reason,
    idempotencyKey: _key,
    ...params
  } = cmd;
  return params as { [key: string]: Json };
}

/** Whether two commands' parameters (see {@link repairParams}) are the same, whatever their key order. */
export function sameRepairParams(a: unknown, b: unknown): boolean {
  return sameJson(a, b);
}

/**
 * A compensation's audit target id: its run, `#rollback-`, its level and ordinal (`<run>#rollback-1.0`).
 * It starts with `<run>#` like a step's, so a run's history and the audit filter by run find it.
 */
export function compensationTargetId(target: CompensationTarget): string {
  return `${target.runId}#rollback-${target.compensation.rollbackLevel}.${target.compensation.ordinal}`;
}

/** What the audit trail names as the command's target. */
export function repairTarget(cmd: RepairCommand): { type: 'run' | 'step' | 'instance' | 'outbox'; id: string } {
  if ('instanceId' in cmd.target) return { type: 'instance', id: cmd.target.instanceId };
  if ('outboxId' in cmd.target) return { type: 'outbox', id: cmd.target.outboxId };
  if ('stepSequence' in cmd.target) return { type: 'step', id: `${cmd.target.runId}#${cmd.target.stepSequence}` };
  if ('compensation' in cmd.target) return { type: 'step', id: compensationTargetId(cmd.target) };
  return { type: 'run', id: cmd.target.runId };
}
