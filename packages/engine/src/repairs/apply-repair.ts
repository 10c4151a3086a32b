import { randomUUID } from 'node:crypto';
import { retryRolledBack } from '../db/retry-rolled-back.ts';
import { operatorStatement, waitingForConnection } from '../runtime/in-run-transaction.ts';
import type { Json } from '../definitions/define-action.ts';
import { EngineError } from '../errors/engine-error.ts';
import { isHeldUp, limitTransaction, lockWaitMs, targetBusyError } from '../process/process-deps.ts';
import { releaseHoldMs } from '../process/release-instance.ts';
import { countKeptMessages } from '../store/count-kept-messages.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { findRepairCommand, type DbRepairCommand } from '../store/repairs/find-repair-command.ts';
import { insertRepairCommand, isDuplicateRepairKey } from '../store/repairs/insert-repair-command.ts';
import { lockRepairKey } from '../store/repairs/lock-repair-key.ts';
import {
  parseRepairCommand,
  repairParams,
  repairTarget,
  sameRepairParams,
  type RepairCommand,
} from './repair-command.ts';
import {
  mergeEffects,
  type RepairActualState,
  type RepairEffects,
  type RepairResult,
  type RepairStatus,
} from './repair-effects.ts';
import { PreparedStale, type RepairDeps } from './repair-handler.ts';
import { runRepairHandlers } from './repair-handlers.ts';
import { expectationDrift, readRepairTarget, readRunTarget } from './read-repair-target.ts';

/** Thrown inside the repair's transaction to roll it back: the command was decided without acting. */
class NotApplied extends Error {
  constructor(
    readonly status: Exclude<RepairStatus, 'applied'>,
    readonly actual: RepairActualState,
    readonly blockers: string[],
    /** The command field the refusal is about: the expectation that drifted, or the blocker's own. */
    readonly field: string | null = null,
  ) {
    super(blockers.join('; '));
  }
}

/** The blocker of a conflict whose expected state drifted. */
export const expectationDrifted = 'the expected state no longer holds';

/** A conflict because what was prepared outside the transaction went stale: prepared again and retried first. */
class PreparedStaleConflict extends NotApplied {}

/** Tries a prepared repair's transaction this many times while what it prepared keeps going stale. */
const preparedTries = 3;

/**
 * Runs `attempt`; while it fails because the target moved on since the repair was prepared (a step
 * committed between the plan and the lock), prepares again and retries, up to {@link preparedTries}
 * times in all. Past that the conflict stands, audited like any other.
 */
async function preparedAgainWhileStale<T>(prepareAgain: () => Promise<void>, attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof PreparedStaleConflict) || n >= preparedTries) throw err;
      await prepareAgain();
    }
  }
}

/** Engine errors that mean "this target cannot take this command as it is", raised by the engine's own functions. */
const refusalCodes = new Set([
  'repair_refused',
  'release_failed',
  'state_invalid',
  'run_not_open',
  'instance_not_quarantined',
]);

/** A bulk's item applied under the approval of the whole bulk: which, by whom, and how they acted. */
export interface ApprovedAs {
  approvalId: string;
  approver: string;
  approverVia?: string;
}

/**
 * A second operator's approval that the repair's transaction must take first and record last
 * (ADR 0020): `claim` locks the approval and throws when it is no longer pending, so two approvers
 * racing on one approval serialise on its row and only the first applies; `record` writes the
 * approval's outcome in the same transaction as the repair and its audit row.
 */
export interface ApprovalGuard {
  approvalId: string;
  approver: string;
  /** How the approver acted (`token …`), when the caller says. */
  approverVia?: string;
  claim(tx: Prisma.TransactionClient): Promise<void>;
  record(
    tx: Prisma.TransactionClient,
    outcome: { status: RepairStatus; repairId: string; result: Json; at: Date },
  ): Promise<void>;
}

/**
 * Applies a repair command in ONE transaction: the target locked as the engine's workers and
 * deliver() lock it, the expected state checked, the change made by the engine's own in-transaction
 * functions, the run's `repair.applied` history event (an instance's `repair` history row comes from
 * the operation itself), the audit row, commit. A changed state throws `repair_conflict`
 * (`details.current`), a command the target cannot take `repair_refused` (`details.blockers`): both
 * change nothing and leave an audit row saying so. The same idempotency key returns (or throws) the
 * first result, with no second effect.
 */
export async function applyRepair(
  deps: RepairDeps,
  raw: unknown,
  opts: {
    bulkId?: string;
    guard?: ApprovalGuard;
    approvedAs?: ApprovedAs;
    /** How long a row another session holds is waited for; half the transaction limit when not given. */
    lockWaitMs?: number;
  } = {},
): Promise<RepairResult> {
  const cmd = parseRepairCommand(raw, deps.runtime.config.limits);
  const { guard } = opts;
  // An approved command is decided by its approval's row lock (guard.claim), never by replaying an
  // earlier result: a key already used refuses it (below).
  const prior = await operatorStatement(deps.runtime, () => findRepairCommand(deps.runtime.prisma, cmd.idempotencyKey));
  // An approved command whose key another call already used (a second submit of the key that lost a
  // race, host code applying it ungated) cannot act: the approval is decided as refused (review 43).
  if (prior && guard) return refuseUsedKey(deps, cmd, guard, prior);
  if (prior) return resumed(deps, cmd, prior, replay(cmd, prior));
  const target = repairTarget(cmd);
  const id = randomUUID();
  const lockWait = opts.lockWaitMs ?? lockWaitMs(deps.process.transactionTimeoutMs);
  const holdMs = await repairHoldMs(deps, cmd);
  const log = deps.runtime.logger.child({ repair: id, command: cmd.kind, target: target.id, actor: cmd.actor });
  let prepared = await prepare(deps, cmd);
  const base = auditBase(cmd, id, {
    bulkId: opts.bulkId ?? null,
    approvalId: (guard ?? opts.approvedAs)?.approvalId ?? null,
    approvedBy: (guard ?? opts.approvedAs)?.approver ?? null,
    approvedVia: (guard ?? opts.approvedAs)?.approverVia ?? null,
  });
  try {
    // What was prepared outside the transaction is prepared again when the target moved on meanwhile.
    const done = await preparedAgainWhileStale(
      async () => {
        prepared = await prepare(deps, cmd);
      },
      () =>
        retryRolledBack(() =>
          // A transaction that got no pooled connection in time never began: it starts again, for up to the
          // lease, as an operator's other commands do (ADR 0078). Review 20's CI run: 200 repairs at once on a
          // loaded machine waited past the pool's connect timeout.
          waitingForConnection(
            deps.runtime,
            () =>
              deps.runtime.prisma.$transaction(
                async (tx) => {
                  // Bounded in the database too: a row another session holds (an instance a host's transaction
                  // keeps, a psql FOR UPDATE) is waited for at most half the limit, as a delivery is (review 55).
                  await limitTransaction(tx, deps.process.transactionTimeoutMs, lockWait);
                  await guard?.claim(tx);
                  const now = deps.runtime.clock.now();
                  // The run's repair.applied goes in once the checks passed and before the handler's own writes,
                  // so a repair that ends the run leaves its terminal event last in the history.
                  const applied = async () => {
                    if (!('runId' in cmd.target)) return;
                    await appendFlowEvent(tx, {
                      runId: cmd.target.runId,
                      type: 'repair.applied',
                      ...('stepSequence' in cmd.target ? { sequence: cmd.target.stepSequence } : {}),
                      data: {
                        repair: id,
                        command: cmd.kind,
                        ...('compensation' in cmd.target ? { compensation: cmd.target.compensation } : {}),
                        actor: cmd.actor,
                        ...(cmd.via === undefined ? {} : { via: cmd.via }),
                        reason: cmd.reason,
                      },
                    });
                  };
                  const { actual, effects, after } = await decide(tx, deps, cmd, prepared, { id, now }, applied);
                  await insertRepairCommand(tx, {
                    ...base,
                    at: now,
                    actual: actual,
                    result: { effects } as unknown as Json,
                    status: 'applied',
                  });
                  await guard?.record(tx, {
                    status: 'applied',
                    repairId: id,
                    result: { actual, effects } as unknown as Json,
                    at: now,
                  });
                  return { actual, effects, after, at: now };
                },
                { maxWait: deps.process.transactionTimeoutMs, timeout: holdMs },
              ),
            'no database connection for an operator repair in time; waiting again',
          ),
        ),
    );
    const effects = done.effects;
    // What the work after the commit did (a terminate's batches, ADR 0126), in the answer only.
    const afterCommit = done.after
      ? await done
          .after()
          .catch((err: unknown) => void log.warn({ err }, 'a repair committed; a listener after it failed'))
      : undefined;
    log.info({ status: 'applied', effects, afterCommit }, 'repair applied');
    return {
      id,
      kind: cmd.kind,
      status: 'applied',
      target,
      actual: done.actual,
      effects,
      at: done.at.toISOString(),
      replayed: false,
      ...(afterCommit && afterCommit.length > 0 ? { afterCommit } : {}),
    };
  } catch (err) {
    if (isDuplicateRepairKey(err)) return guard ? refuseUsedKeyAfterRace(deps, cmd, guard) : replayAfterRace(deps, cmd);
    if (isHeldUp(err)) throw targetBusy(deps, cmd, err, lockWait, log);
    if (!(err instanceof NotApplied)) throw err;
    const at = deps.runtime.clock.now();
    const row = { ...base, at, actual: err.actual, result: { blockers: err.blockers }, status: err.status };
    try {
      if (!guard) await operatorStatement(deps.runtime, () => insertRepairCommand(deps.runtime.prisma, row));
      else {
        const { status, actual, blockers } = err;
        await operatorStatement(deps.runtime, () =>
          deps.runtime.prisma.$transaction(async (tx) => {
            await guard.claim(tx);
            await insertRepairCommand(tx, row);
            await guard.record(tx, { status, repairId: id, result: { actual, blockers }, at });
          }),
        );
      }
    } catch (auditErr) {
      if (isDuplicateRepairKey(auditErr))
        return guard ? refuseUsedKeyAfterRace(deps, cmd, guard) : replayAfterRace(deps, cmd);
      throw auditErr;
    }
    log.info({ status: err.status, actual: err.actual, blockers: err.blockers }, `repair ${err.status}`);
    throw notAppliedError(cmd, err.status, err.actual, err.blockers, id, false, err.field);
  }
}

/**
 * How long the repair's transaction may hold its connection: the limit, or for a release the limit and an
 * allowance per message the instance kept, which the release applies in the same transaction (ADR 0134).
 */
async function repairHoldMs(deps: RepairDeps, cmd: RepairCommand): Promise<number> {
  const limitMs = deps.process.transactionTimeoutMs;
  if (cmd.kind !== 'instance.release') return limitMs;
  const { instanceId } = cmd.target;
  const kept = await operatorStatement(deps.runtime, () => countKeptMessages(deps.runtime.prisma, instanceId));
  return releaseHoldMs(limitMs, kept);
}

/**
 * The repair's transaction gave up within its limit (`processes.transaction_timeout_ms`): a row it needed
 * was held by another session past half of it, or a statement ran past all of it. It rolled back whole:
 * nothing changed and nothing was audited (nothing was decided); the same command, key included, can be
 * sent again once the target is let go (review 55; Stripe answers the same case `lock_timeout`).
 */
function targetBusy(
  deps: RepairDeps,
  cmd: RepairCommand,
  err: unknown,
  lockWait: number,
  log: { warn(o: object, m: string): void },
) {
  const target = repairTarget(cmd);
  log.warn({ err }, 'repair not applied: its target was held by another session past the transaction limit');
  const limits = { lockWaitMs: lockWait, limitMs: deps.process.transactionTimeoutMs };
  return targetBusyError(`${cmd.kind} on ${target.type} ${target.id}`, limits, err, true);
}

/**
 * An approved command whose idempotency key already has an audit row: the key acted (or was refused)
 * once and never acts again, so the approval is decided as `refused`, naming the repair that used the
 * key, under the approval's row lock; the approver is told `repair_refused`. Nothing else is written.
 */
async function refuseUsedKey(
  deps: RepairDeps,
  cmd: RepairCommand,
  guard: ApprovalGuard,
  prior: DbRepairCommand,
): Promise<never> {
  const blockers = [
    `idempotency key ${cmd.idempotencyKey} was already used by repair ${prior.id} (${prior.command}, ${prior.status}, by ${prior.actor}): ` +
      'a key never acts twice; draft it again with a new key if it is still wanted',
  ];
  const at = deps.runtime.clock.now();
  await operatorStatement(deps.runtime, () =>
    deps.runtime.prisma.$transaction(async (tx) => {
      await guard.claim(tx);
      await guard.record(tx, {
        status: 'refused',
        repairId: prior.id,
        result: { actual: prior.actual as Json, blockers },
        at,
      });
    }),
  );
  deps.runtime.logger.info(
    { repair: prior.id, command: cmd.kind, approval: guard.approvalId },
    'approved repair refused: its idempotency key was already used',
  );
  throw notAppliedError(cmd, 'refused', prior.actual, blockers, prior.id, false);
}

/** The same, when the key's other use committed while this approval's transaction ran. */
async function refuseUsedKeyAfterRace(deps: RepairDeps, cmd: RepairCommand, guard: ApprovalGuard): Promise<never> {
  const prior = await findRepairCommand(deps.runtime.prisma, cmd.idempotencyKey);
  if (!prior) throw new Error(`repair key ${cmd.idempotencyKey} was taken, yet no repair holds it`);
  return refuseUsedKey(deps, cmd, guard, prior);
}

/** The audit row's fields that say who asked for what, on what, against which state, and why. */
function auditBase(
  cmd: RepairCommand,
  id: string,
  links: { bulkId: string | null; approvalId: string | null; approvedBy: string | null; approvedVia?: string | null },
) {
  const target = repairTarget(cmd);
  return {
    id,
    actor: cmd.actor,
    via: cmd.via ?? null,
    command: cmd.kind,
    targetType: target.type,
    targetId: target.id,
    expected: cmd.expected as Json,
    params: repairParams(cmd),
    reason: cmd.reason,
    idempotencyKey: cmd.idempotencyKey,
    ...links,
  };
}

/**
 * A command decided without acting on it outside apply's transaction — a gated draft whose expected
 * state already fails, refused before anyone is asked to approve it (ADR 0020) — is audited like
 * any refused repair: a row saying conflict or refused with the state found, then the same error
 * apply would throw. A key another call used first answers with that call's result.
 */
export async function auditNotApplied(
  deps: RepairDeps,
  cmd: RepairCommand,
  status: Exclude<RepairStatus, 'applied'>,
  actual: RepairActualState,
  blockers: string[],
  /** Under the key's lock, before the row is written: true when the key is a draft already (nothing is written). */
  drafted?: (tx: Prisma.TransactionClient) => Promise<boolean>,
): Promise<RepairResult | 'drafted'> {
  const id = randomUUID();
  const row = {
    ...auditBase(cmd, id, { bulkId: null, approvalId: null, approvedBy: null }),
    at: deps.runtime.clock.now(),
    actual,
    result: { blockers },
    status,
  };
  try {
    const written = await operatorStatement(deps.runtime, () =>
      deps.runtime.prisma.$transaction(async (tx) => {
        await lockRepairKey(tx, cmd.idempotencyKey);
        if (drafted && (await drafted(tx))) return false;
        await insertRepairCommand(tx, row);
        return true;
      }),
    );
    if (!written) return 'drafted';
  } catch (err) {
    if (isDuplicateRepairKey(err)) return replayAfterRace(deps, cmd);
    throw err;
  }
  deps.runtime.logger.info(
    { repair: id, command: cmd.kind, target: row.targetId, actor: cmd.actor, status, actual, blockers },
    `repair ${status}: nothing was sent for approval`,
  );
  throw notAppliedError(cmd, status, actual, blockers, id, false);
}

type Prepared = unknown;

/** The handler's reads that must run outside the transaction (a rollback plan), on the target as it is now. */
async function prepare(deps: RepairDeps, cmd: RepairCommand): Promise<Prepared> {
  if (!('runId' in cmd.target)) return undefined;
  const handler = runRepairHandlers[cmd.kind];
  if (!handler?.prepare) return undefined;
  const target = await operatorStatement(deps.runtime, () => readRunTarget(deps.runtime.prisma, cmd as never, false));
  return handler.prepare(deps, cmd, target);
}

/** Inside the repair's transaction: lock, check, plan, perform. Throws NotApplied to roll back. */
async function decide(
  tx: Prisma.TransactionClient,
  deps: RepairDeps,
  cmd: RepairCommand,
  prepared: Prepared,
  audit: { id: string; now: Date },
  beforePerform: () => Promise<void>,
): Promise<{ actual: RepairActualState; effects: RepairEffects; after?: () => Promise<void | string[]> }> {
  const { handler, target, actual } = await readRepairTarget(tx, deps, cmd, true);
  // Planned first: input only the target can judge (a state the process does not have) is bad input,
  // whatever state the target is in. Then a changed state (conflict) ranks before any other refusal.
  const plan = await handler.plan(tx, deps, cmd, target, prepared).catch((err: unknown) => {
    if (err instanceof EngineError && refusalCodes.has(err.code)) return { refusal: err.message, field: err.field };
    throw err;
  });
  const drift = expectationDrift(cmd, actual);
  if (drift !== null) throw new NotApplied('conflict', actual, [expectationDrifted], drift);
  if ('refusal' in plan) throw new NotApplied('refused', actual, [plan.refusal], plan.field);
  if (plan.blockers.length > 0) throw new NotApplied('refused', actual, plan.blockers, plan.field ?? null);
  await beforePerform();
  try {
    const done = await handler.perform(tx, deps, cmd, target, prepared, audit);
    return {
      actual,
      effects: done.effects ? mergeEffects(plan.effects, done.effects) : plan.effects,
      after: done.after,
    };
  } catch (err) {
    if (err instanceof EngineError && refusalCodes.has(err.code))
      throw new NotApplied('refused', actual, [err.message], err.field);
    if (err instanceof PreparedStale)
      throw new PreparedStaleConflict('conflict', actual, [
        `${err.message} ${preparedTries} times; preview the command again`,
      ]);
    throw err;
  }
}

function notAppliedError(
  cmd: RepairCommand,
  status: Exclude<RepairStatus, 'applied'>,
  current: unknown,
  blockers: string[],
  repairId: string,
  replayed: boolean,
  field: string | null = null,
): EngineError {
  const details = { repairId, current, expected: cmd.expected, blockers, replayed };
  const { type, id } = repairTarget(cmd);
  // What an operator calls it: an outbox target is one row of the outbox.
  const target = { type: type === 'outbox' ? 'outbox row' : type, id };
  const named = field === null ? {} : { field };
  if (status === 'conflict' && blockers.some((b) => b !== expectationDrifted))
    return new EngineError(
      'repair_conflict',
      `${cmd.kind} on ${target.type} ${target.id}: ${blockers.join('; ')}; nothing changed`,
      { details, ...named },
    );
  if (status === 'conflict')
    return new EngineError(
      'repair_conflict',
      `${cmd.kind} on ${target.type} ${target.id}: it was drafted against ${JSON.stringify(cmd.expected)} but the ${target.type} is now ${JSON.stringify(current)}${field === null ? '' : ` (${field} differs)`}; nothing changed. Preview it again and draft it against the current state`,
      { details, ...named },
    );
  return new EngineError(
    'repair_refused',
    `${cmd.kind} on ${target.type} ${target.id} cannot apply: ${field === null ? '' : `${field}: `}${blockers.join('; ')}; nothing changed`,
    { details, ...named },
  );
}

/**
 * The first result of an idempotency key, for a command that must be the same command: the same kind,
 * on the same target, with the same parameters (an operator command's name and input, a forced
 * transition's state). Anything else under the key is another command (review 39: a second operator
 * command was answered with the first one's result, `replayed: true`).
 */
function replay(cmd: RepairCommand, prior: DbRepairCommand): RepairResult {
  const target = repairTarget(cmd);
  if (prior.command !== cmd.kind || prior.target_id !== target.id)
    throw new EngineError(
      'invalid_input',
      `idempotencyKey: already used by ${prior.command} on ${prior.target_type} ${prior.target_id}; use a fresh key for another command`,
      { field: 'idempotencyKey' },
    );
  if (!sameRepairParams(prior.params, repairParams(cmd)))
    throw new EngineError(
      'invalid_input',
      `idempotencyKey: already used by ${prior.command} on ${prior.target_type} ${prior.target_id} with other parameters; use a fresh key for another command`,
      { field: 'idempotencyKey' },
    );
  const result = prior.result as { effects?: RepairEffects; blockers?: string[] };
  if (prior.status !== 'applied')
    throw notAppliedError(
      cmd,
      prior.status as Exclude<RepairStatus, 'applied'>,
      prior.actual,
      result.blockers ?? [],
      prior.id,
      true,
      prior.status === 'conflict' ? expectationDrift(cmd, prior.actual as RepairActualState) : null,
    );
  return {
    id: prior.id,
    kind: prior.command,
    status: 'applied',
    target: { type: prior.target_type, id: prior.target_id },
    actual: prior.actual as RepairActualState,
    effects: result.effects as RepairEffects,
    at: prior.at.toISOString(),
    replayed: true,
  };
}

/**
 * A replayed applied command whose work after its commit may have stopped part way (a terminate's
 * batches, ADR 0126): its handler finishes it, and the answer says what that did.
 */
async function resumed(
  deps: RepairDeps,
  cmd: RepairCommand,
  prior: DbRepairCommand,
  result: RepairResult,
): Promise<RepairResult> {
  const handler = 'runId' in cmd.target ? runRepairHandlers[cmd.kind] : undefined;
  if (result.status !== 'applied' || !handler?.resume) return result;
  const afterCommit = await handler.resume(deps, cmd, { reason: prior.reason });
  return afterCommit.length === 0 ? result : { ...result, afterCommit };
}

/** Another call with the same key committed first (the unique index said so): its result is ours. */
async function replayAfterRace(deps: RepairDeps, cmd: RepairCommand): Promise<RepairResult> {
  const prior = await operatorStatement(deps.runtime, () => findRepairCommand(deps.runtime.prisma, cmd.idempotencyKey));
  if (!prior) throw new EngineError('internal', `idempotency key ${cmd.idempotencyKey} collided but has no row`);
  return replay(cmd, prior);
}
