import { randomUUID } from 'node:crypto';
import type { RepairCommandInfo, RepairPreview, RepairResult } from '@sagaflow/engine';
import { CliError } from '../cli-error.ts';
import type { CliContext, CommandOutcome } from '../cli-context.ts';
import type { ApiOutputs, ControlClient } from '../control-client.ts';
import { exitCodeForRepairStatus, exitCodes } from '../exit-codes.ts';
import { afterCommitLines, effectLines } from '../format/format-repair.ts';
import { intOption, usageError, type Options } from '../parse-cli-args.ts';

/** What a repair command line asks for: a catalogue kind, the run or instance, a step, parameters. */
export interface RepairRequest {
  kind: string;
  /** The run's id (run and step commands), the instance's, or the outbox row's. */
  id: string;
  step: number | undefined;
  /** A compensation instead of a step (`reclaim --compensation 1.0`): its rollback level and ordinal. */
  compensation?: Compensation | undefined;
  params: Record<string, unknown>;
}

type Compensation = { rollbackLevel: number; ordinal: number };

/**
 * `--compensation L.O`: the compensation at ordinal O of rollback level L, as `run show` lists it
 * (ADR 0031). Undefined when the option is absent.
 */
export function compensationOption(value: string | undefined): Compensation | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{1,6})\.(\d{1,6})$/.exec(value.trim());
  if (!m || Number(m[1]) < 1)
    throw usageError(
      `--compensation must be LEVEL.ORDINAL (e.g. 1.0, as \`sagaflow run show\` lists it), not "${value}"`,
    );
  return { rollbackLevel: Number(m[1]), ordinal: Number(m[2]) };
}

/** The options every repair takes (see `sagaflow help`). */
export const repairOptions = [
  'reason',
  'dry-run',
  'idempotency-key',
  'expect-status',
  'expect-step-status',
  'expect-attempts',
  'expect-state',
  'expect-version',
] as const;

type Catalogue = Record<string, RepairCommandInfo>;
type Target =
  | { runId: string }
  | { runId: string; stepSequence: number }
  | { runId: string; compensation: Compensation }
  | { instanceId: string }
  | { outboxId: string };

/**
 * Drafts a repair the way the console does and sends it: the command's target shape comes from the
 * control plane's own catalogue (so a command added there works here unchanged), the expected state
 * from what the CLI reads now (or from --expect-* flags), a fresh idempotency key unless one is
 * given. --dry-run previews (exit 0 if it would apply, 2 if not); otherwise it applies, and the exit
 * status says whether it was done (0), refused (2) or waits for approval (4).
 */
export async function runRepair(ctx: CliContext, request: RepairRequest, options: Options): Promise<CommandOutcome> {
  const dryRun = options['dry-run'] === true;
  const reason = options.reason?.trim();
  if (!dryRun && !reason)
    throw usageError(
      `${request.kind} needs --reason "<why>": it goes on the audit row (or preview first with --dry-run)`,
    );
  const client = ctx.client();
  const catalogue = await client.query<Catalogue>('repairs.catalogue');
  const info = catalogue[request.kind];
  if (!info)
    throw new CliError(
      exitCodes.usage,
      `the control plane at ${client.shownUrl} has no ${request.kind} repair; it offers ${Object.keys(catalogue).join(', ')} (see \`sagaflow repairs\`)`,
    );
  const target = targetFor(request, info);
  // A key given on the command line may be a retry of a repair that finished its run (expire, cancel): the
  // control plane answers such a key with its first result, so a finished run is not refused here then
  // (review 36). A generated key is new, and a finished run is refused before anything is sent.
  const finished: FinishedRun = { run: null };
  const expected = await expectedState(
    client,
    target,
    options,
    options['idempotency-key'] !== undefined && !dryRun ? finished : null,
  );
  const idempotencyKey = options['idempotency-key'] ?? `cli-${randomUUID()}`;
  const command = {
    kind: request.kind,
    target,
    // A finished status is none a command can be drafted against (the engine takes only an open one). A used
    // key is answered with its first result before the expectation is read, so the retry of a finished run
    // states an open one; it is applied only once the preview says the key was used (below).
    expected:
      finished.run !== null && expected.runStatus === finished.run.status
        ? { ...expected, runStatus: 'Running' }
        : expected,
    reason: reason ?? 'preview',
    idempotencyKey,
    ...request.params,
  };
  const subject = subjectOf(target);
  const drafted =
    finished.run === null
      ? `  drafted against ${JSON.stringify(expected)}`
      : `  the run is ${finished.run.status} now; what its idempotency key did the first time:`;
  // A retry must be the same command: the same key and the same expectation (the state may have moved since).
  const retryFlags = [`--idempotency-key ${idempotencyKey}`, ...(finished.run ? [] : expectFlags(expected))].join(' ');

  if (dryRun) {
    const preview = await client.query<RepairPreview & { decided: { id: string; status: string } | null }>(
      'repairs.preview',
      command,
    );
    const would = preview.applicable ? 'would apply' : 'would NOT apply';
    const gated = preview.applicable && (await gatedByPolicy(client, request.kind));
    return {
      exitCode: preview.applicable ? exitCodes.done : exitCodes.refused,
      json: { command, preview },
      human: [
        `${request.kind} on ${subject} ${would} (dry run: nothing written)`,
        drafted,
        ...(preview.expectedHolds ? [] : [`  the state is now ${JSON.stringify(preview.actual)}`]),
        ...preview.blockers.map((b) => `  blocker     ${b}`),
        ...effectLines(preview.effects),
        ...(preview.destructive ? ['  destructive: it undoes or overrides recorded work'] : []),
        ...(gated
          ? [
              `  approval    the policy gates ${request.kind}: applied, it waits for another operator's approval (exit 4)`,
            ]
          : []),
      ],
    };
  }

  if (finished.run !== null) {
    // Only a used key is sent on to be applied: a new one would only be refused, with an audit row of an
    // expectation nobody drafted. The preview writes nothing.
    const probe = await client.query<{ decided: { id: string; status: string } | null }>('repairs.preview', command);
    if (probe.decided === null)
      throw new CliError(
        exitCodes.refused,
        `${finishedText(finished.run)}; --idempotency-key ${idempotencyKey} was never used, so there is nothing ` +
          'to replay and nothing was changed',
        { current: { runStatus: finished.run.status } },
      );
  }
  let result: RepairResult & { status: string };
  try {
    result = await client.mutate<RepairResult & { status: string }>('repairs.applyOne', command);
  } catch (err) {
    if (err instanceof CliError && err.exitCode === exitCodes.refused && finished.run !== null)
      throw new CliError(
        err.exitCode,
        `${finishedText(finished.run)}, and --idempotency-key ${idempotencyKey} applied nothing to it before: ${err.message}`,
        { command, ...(err.body as object) },
      );
    if (err instanceof CliError && err.exitCode === exitCodes.refused)
      throw new CliError(
        err.exitCode,
        `${err.message}. Run the command again to draft it against the state now, or look first: ${lookFirst(target)}`,
        { command, ...(err.body as object) },
      );
    if (err instanceof CliError && err.exitCode === exitCodes.error)
      throw new CliError(err.exitCode, `${err.message}; to retry exactly this command add ${retryFlags}`, err.body);
    throw err;
  }
  const status = String(result.status);
  const exitCode = exitCodeForRepairStatus(status);
  const headline =
    status === 'applied'
      ? `${request.kind} applied to ${subject}${result.replayed ? ' (replayed: this idempotency key was used before; nothing done twice)' : ''}`
      : exitCode === exitCodes.awaitingApproval
        ? `${request.kind} on ${subject} is waiting for another operator's approval: nothing changes until it is approved`
        : `${request.kind} on ${subject} was not applied (${status}${decidedText(result)})`;
  return {
    exitCode,
    json: { command, result },
    human: [
      headline,
      drafted,
      ...effectLines(result.effects),
      ...afterCommitLines(result.afterCommit),
      ...(result.id ? [`  audit row   ${result.id}`] : []),
      ...(typeof (result as { approvalId?: unknown }).approvalId === 'string'
        ? [
            `  approval    ${(result as unknown as { approvalId: string }).approvalId}: another operator approves or rejects it (console: Approvals; CLI: sagaflow approve / reject)`,
          ]
        : []),
      `  to repeat it without a second effect: ${retryFlags}`,
    ],
  };
}

type RunRow = ApiOutputs['runs']['get']['run'];
/** Where a draft under a given key notes a finished run it sends anyway (the key may replay). */
type FinishedRun = { run: RunRow | null };

const finishedText = (run: RunRow) =>
  `run ${run.id} is ${run.status} (finished at ${run.finishedAt}): a finished run is never changed`;

/**
 * The run, if it is still open: a finished run is never changed (invariant 1), so there is nothing to draft.
 * With `keep` (a key given on the command line), a finished run is noted there and drafted as it is.
 */
function open(detail: ApiOutputs['runs']['get'], keep: FinishedRun | null): RunRow {
  const { run } = detail;
  if (run.finishedAt !== null) {
    if (keep !== null) {
      keep.run = run;
      return run;
    }
    throw new CliError(exitCodes.refused, `${finishedText(run)}; nothing was sent`, {
      current: { runStatus: run.status },
    });
  }
  return run;
}

/**
 * Whether the approval policy gates this kind, so applying it would wait for approval (exit 4): a dry run
 * says so (review 36). Only a hint: false when the policy cannot be read.
 */
async function gatedByPolicy(client: ControlClient, kind: string): Promise<boolean> {
  try {
    const policy = await client.query<ApiOutputs['approvalPolicy']['get']>('approvalPolicy.get');
    return (policy.gatedCommands as readonly string[]).includes(kind);
  } catch {
    return false;
  }
}

/** The --expect-* flags that state `expected` again. */
function expectFlags(expected: Record<string, unknown>): string[] {
  const flag: Record<string, string> = {
    runStatus: '--expect-status',
    stepStatus: '--expect-step-status',
    stepAttempts: '--expect-attempts',
    state: '--expect-state',
    version: '--expect-version',
    status: '--expect-status',
    attempts: '--expect-attempts',
  };
  return Object.entries(expected).map(([k, v]) => `${flag[k] ?? `--expect-${k}`} ${JSON.stringify(v)}`);
}

function targetFor(request: RepairRequest, info: RepairCommandInfo): Target {
  const hint = 'its sequence number, as `sagaflow run show` lists it';
  switch (info.target) {
    case 'outbox':
      if (request.step !== undefined) throw usageError(`${request.kind} acts on an outbox row; it takes no --step`);
      return { outboxId: request.id };
    case 'instance':
      if (request.step !== undefined) throw usageError(`${request.kind} acts on an instance; it takes no --step`);
      return { instanceId: request.id };
    case 'step':
      if (request.compensation !== undefined) {
        if (request.step !== undefined) throw usageError(`${request.kind} takes --step or --compensation, not both`);
        return { runId: request.id, compensation: request.compensation };
      }
      if (request.step === undefined) throw usageError(`${request.kind} needs --step N: ${hint}`);
      return { runId: request.id, stepSequence: request.step };
    default:
      if (request.step !== undefined) throw usageError(`${request.kind} acts on the whole run; it takes no --step`);
      return { runId: request.id };
  }
}

/** The state to draft against: the --expect-* flags where given, the rest as read now. */
async function expectedState(
  client: ControlClient,
  target: Target,
  o: Options,
  keep: FinishedRun | null,
): Promise<Record<string, unknown>> {
  if ('outboxId' in target) {
    let status = o['expect-status'];
    let attempts = intOption('expect-attempts', o['expect-attempts'], 0, Number.MAX_SAFE_INTEGER);
    if (status === undefined || attempts === undefined) {
      const row = await client.query<ApiOutputs['outbox']['get']>('outbox.get', { id: target.outboxId });
      status ??= row.status;
      attempts ??= row.attempts;
    }
    return { status, attempts };
  }
  if ('instanceId' in target) {
    let state = o['expect-state'];
    let version = intOption('expect-version', o['expect-version'], 0, Number.MAX_SAFE_INTEGER);
    if (state === undefined || version === undefined) {
      const found = await client.query<ApiOutputs['instances']['get']>('instances.get', { id: target.instanceId });
      state ??= found.instance.currentState;
      version ??= found.instance.version;
    }
    return { state, version };
  }
  let runStatus = o['expect-status'];
  if ('compensation' in target) return compensationExpected(client, target, o, keep);
  if (!('stepSequence' in target)) {
    runStatus ??= open(await client.query<ApiOutputs['runs']['get']>('runs.get', { id: target.runId }), keep).status;
    return { runStatus };
  }
  let stepStatus = o['expect-step-status'];
  let stepAttempts = intOption('expect-attempts', o['expect-attempts'], 0, Number.MAX_SAFE_INTEGER);
  if (runStatus === undefined || stepStatus === undefined || stepAttempts === undefined) {
    const detail = await client.query<ApiOutputs['runs']['get']>('runs.get', { id: target.runId });
    open(detail, keep);
    // The step itself, wherever it is in the run's history: the one just before the next sequence.
    const at = await client.query<ApiOutputs['runs']['steps']>('runs.steps', {
      id: target.runId,
      before: target.stepSequence + 1,
      limit: 1,
    });
    const step = at.rows.find((a) => a.sequence === target.stepSequence);
    if (!step)
      throw usageError(
        `run ${target.runId} has no step ${target.stepSequence}; its steps: ${
          detail.actions.map((a) => `${a.sequence} ${a.name} (${a.status})`).join(', ') || 'none yet'
        }`,
      );
    runStatus ??= detail.run.status;
    stepStatus ??= step.status;
    stepAttempts ??= step.attempts;
  }
  return { runStatus, stepStatus, stepAttempts };
}

/** A compensation's expected state: the --expect-* flags where given, the rest from its row as read now. */
async function compensationExpected(
  client: ControlClient,
  target: { runId: string; compensation: Compensation },
  o: Options,
  keep: FinishedRun | null,
): Promise<Record<string, unknown>> {
  let runStatus = o['expect-status'];
  let stepStatus = o['expect-step-status'];
  let stepAttempts = intOption('expect-attempts', o['expect-attempts'], 0, Number.MAX_SAFE_INTEGER);
  if (runStatus === undefined || stepStatus === undefined || stepAttempts === undefined) {
    const detail = await client.query<ApiOutputs['runs']['get']>('runs.get', { id: target.runId });
    open(detail, keep);
    const { rollbackLevel, ordinal } = target.compensation;
    const at = await client.query<ApiOutputs['runs']['compensations']>('runs.compensations', {
      id: target.runId,
      before: { level: rollbackLevel, ordinal: ordinal + 1 },
      limit: 1,
    });
    const row = at.rows.find((c) => c.rollbackLevel === rollbackLevel && c.ordinal === ordinal);
    if (!row)
      throw usageError(
        `run ${target.runId} has no compensation ${rollbackLevel}.${ordinal}; its compensations: ${
          detail.compensations.map((c) => `${c.rollbackLevel}.${c.ordinal} ${c.name} (${c.status})`).join(', ') ||
          'none yet'
        }`,
      );
    runStatus ??= detail.run.status;
    stepStatus ??= row.status;
    stepAttempts ??= row.attempts;
  }
  return { runStatus, stepStatus, stepAttempts };
}

/** A replayed draft's decision, as the approval recorded it: by whom and why. */
function decidedText(result: unknown): string {
  const approval = (result as { approval?: { decidedBy?: unknown; decisionReason?: unknown } } | null)?.approval;
  if (!approval || typeof approval.decidedBy !== 'string') return '';
  const why = typeof approval.decisionReason === 'string' ? `: ${approval.decisionReason}` : '';
  return ` by ${approval.decidedBy}${why}; this key's draft was decided, draft again with a fresh key`;
}

/** What the command acts on, in words: `run <id>`, `instance <id>`, `outbox row <id>`. */
function subjectOf(target: Target): string {
  if ('outboxId' in target) return `outbox row ${target.outboxId}`;
  if ('instanceId' in target) return `instance ${target.instanceId}`;
  return `run ${target.runId}`;
}

/** The command that shows the target as it is now. An outbox row is shown with its instance. */
function lookFirst(target: Target): string {
  if ('outboxId' in target) return `sagaflow instance show <its instance id> (its Dead outbox rows are listed there)`;
  if ('instanceId' in target) return `sagaflow instance show ${target.instanceId}`;
  return `sagaflow run show ${target.runId}`;
}
