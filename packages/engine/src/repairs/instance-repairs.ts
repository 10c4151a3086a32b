import { EngineError, thrownText } from '../errors/engine-error.ts';
import { checkAgainstSchema } from '../input/validate-against-schema.ts';
import { applyDecision } from '../process/apply-decision.ts';
import { applied, decide, type Decision } from '../process/decide.ts';
import type { ProcessDefinition } from '../process/define-process.ts';
import { checkDecisionToStore } from '../process/check-decision.ts';
import { decodeState } from '../process/decode-state.ts';
import { releaseInTransaction } from '../process/release-instance.ts';
import {
  checkOperatorCommand,
  decideOperatorCommand,
  operatorCommandInTransaction,
  parseOperatorCommand,
} from '../process/run-operator-command.ts';
import { listSkippedMessages } from '../store/list-skipped-messages.ts';
import type { DbSagaInstance } from '../store/lock-saga-instance.ts';
import type { Db } from '../store/types.ts';
import type { RepairCommandOf } from './repair-command.ts';
import { mergeEffects, noEffects, type RepairEffects } from './repair-effects.ts';
import type { InstanceTarget, RepairDeps, RepairHandler, RepairPlan } from './repair-handler.ts';

function definitionOf(target: InstanceTarget): ProcessDefinition {
  if (!target.def)
    throw new EngineError('repair_refused', `process "${target.row.process_name}" is not registered on this engine`);
  return target.def;
}

/** The effects of an applied decision: the transition, its outbox messages and armed timeouts. */
function decisionEffects(row: DbSagaInstance, decision: Decision & { kind: 'applied' }): RepairEffects {
  const effects = noEffects();
  effects.transitions.push({ subject: `instance ${row.id}`, from: decision.from, to: decision.to });
  effects.outboxMessages.push(...decision.commands.map((c) => ({ type: c.type, destination: c.destination })));
  for (const t of decision.timeouts) effects.notes.push(`arms timeout "${t.name}" due in ${t.afterMs} ms`);
  if (decision.completes) effects.notes.push('the instance is COMPLETED');
  effects.history.push('repair');
  return effects;
}

/** Decodes the instance's data, or returns the reason it no longer decodes (a blocker). */
function decoded(def: ProcessDefinition, row: DbSagaInstance): { data: unknown } | { blocker: string } {
  const d = decodeState(def, row.state);
  return d.ok ? { data: d.data } : { blocker: `its stored state no longer decodes (${d.error})` };
}

/** How many kept messages a release's preview and audit row describe one by one; the rest are counted. */
export const keptMessagesDescribed = 100;

/**
 * What the kept messages do once the release has handled the message it stopped on (review 59): each
 * decided in arrival order from the state the release leaves, as `releaseInTransaction` applies them, so
 * the preview, the answer and the audit row name their transitions and outbox messages. One that would
 * fail (its handler throws, its payload or the instance's state no longer parses) quarantines the
 * instance again on it, and the release stops there. The first {@link keptMessagesDescribed} are
 * described; beyond them only what they add up to is.
 */
async function keptMessagesEffects(
  db: Db,
  deps: RepairDeps,
  def: ProcessDefinition,
  row: DbSagaInstance,
  start: { state: string; data: unknown } | { blocker: string },
): Promise<{ effects: RepairEffects; stopsOn: string | null }> {
  const effects = noEffects();
  // A copy of the message it stopped on, redelivered while it was quarantined, is handled by the release
  // first (retried or skipped) and then left out, as releaseInTransaction leaves it (review 61).
  const kept = (await listSkippedMessages(db, { instanceId: row.id, consumer: def.name })).filter(
    (k) => k.messageId !== row.failure_redelivery_key,
  );
  if (kept.length === 0) return { effects, stopsOn: null };
  const listed = kept.slice(0, keptMessagesDescribed).map((k) => k.messageId);
  const unlisted = kept.length - listed.length;
  effects.notes.push(
    `then delivers the ${kept.length} message(s) it kept while quarantined, in arrival order: ${listed.join(', ')}${unlisted > 0 ? ` and ${unlisted} more` : ''}`,
  );
  let snapshot = start;
  let described = 0;
  let moves = 0;
  let sends = 0;
  for (const k of kept) {
    const what = `kept message ${k.messageId} (${k.messageType})`;
    const describe = described < keptMessagesDescribed;
    described += 1;
    let failure: string | null = 'blocker' in snapshot ? snapshot.blocker : null;
    if ('state' in snapshot) {
      const schema = def.messages[k.messageType];
      const parsed = schema ? await checkAgainstSchema(schema, k.payload, 'message.payload') : null;
      if (!schema) failure = `"${k.messageType}" is no longer a message of "${def.name}"`;
      else if (!parsed?.ok) failure = `its payload no longer parses as "${k.messageType}"`;
      else
        try {
          const decision = decide(
            def,
            { state: snapshot.state, data: snapshot.data },
            { type: k.messageType, payload: parsed.value },
            { key: row.correlation_key },
          );
          if (decision.kind === 'applied') {
            checkDecisionToStore(def, decision, row.id, deps.process.limits);
            moves += 1;
            sends += decision.commands.length;
            if (describe) {
              effects.transitions.push({ subject: `instance ${row.id}`, from: decision.from, to: decision.to });
              effects.outboxMessages.push(
                ...decision.commands.map((c) => ({ type: c.type, destination: c.destination })),
              );
              for (const t of decision.timeouts) effects.notes.push(`${what} arms timeout "${t.name}"`);
              if (!effects.history.includes('applied')) effects.history.push('applied');
            }
            if (decision.completes) effects.notes.push(`${what} completes the instance`);
            snapshot = { state: decision.to, data: decision.data };
          } else if (describe) effects.notes.push(`${what} is ignored (${decision.reason})`);
        } catch (err) {
          failure = thrownText(err);
        }
    }
    if (failure !== null) {
      effects.transitions.push({ subject: `instance ${row.id} status`, from: 'ACTIVE', to: 'QUARANTINED' });
      effects.notes.push(
        `${what} fails (${failure}): the instance is quarantined again on it, and the release stops there`,
      );
      return { effects, stopsOn: k.messageId };
    }
  }
  if (described > keptMessagesDescribed)
    effects.notes.push(
      `${described - keptMessagesDescribed} more kept message(s) are applied after those listed; in all the kept messages make ${moves} transition(s) and ${sends} outbox message(s)`,
    );
  return { effects, stopsOn: null };
}

/** The release's plan, and the kept message it will stop on (null: none). */
async function planRelease(
  db: Db,
  deps: RepairDeps,
  cmd: RepairCommandOf<'instance.release'>,
  target: InstanceTarget,
): Promise<RepairPlan & { stopsOn: string | null }> {
  const { row } = target;
  const def = definitionOf(target);
  const blockers: string[] = [];
  let effects = noEffects();
  if (row.status !== 'QUARANTINED' || row.failure_redelivery_key === null || row.failure_message_type === null)
    return { blockers: [`instance ${row.id} is ${row.status}, not QUARANTINED`], effects, stopsOn: null };
  const messageType = row.failure_message_type;
  const data = decoded(def, row);
  // The state the kept messages meet: as it is, or as the retried message leaves it.
  let after: { state: string; data: unknown } | { blocker: string } =
    'blocker' in data ? data : { state: row.current_state, data: data.data };
  if (cmd.mode === 'retry') {
    const schema = def.messages[messageType];
    const payload = schema ? await checkAgainstSchema(schema, row.failure_payload, 'message.payload') : null;
    if (!payload?.ok) blockers.push(`the message it stopped on no longer parses as "${messageType}"`);
    else if ('blocker' in data) blockers.push(data.blocker);
    else {
      try {
        const decision = decide(
          def,
          { state: row.current_state, data: data.data },
          { type: messageType, payload: payload.value },
          { key: row.correlation_key },
        );
        if (decision.kind === 'applied') {
          checkDecisionToStore(def, decision, row.id, deps.process.limits);
          effects = decisionEffects(row, decision);
          after = { state: decision.to, data: decision.data };
        } else effects.notes.push(`the message it stopped on is now ignored (${decision.reason})`);
      } catch (err) {
        // The process's own code, run as the release would run it: it still fails.
        blockers.push(
          `retrying message ${row.failure_redelivery_key} fails again now (${thrownText(err)}); fix the cause, or release it with skip`,
        );
      }
    }
    effects.notes.push(`retries message ${row.failure_redelivery_key}; if it fails again nothing changes`);
  } else {
    effects.notes.push(`skips message ${row.failure_redelivery_key}; it stays in the release's history row`);
  }
  effects.transitions.unshift({ subject: `instance ${row.id} status`, from: 'QUARANTINED', to: 'ACTIVE' });
  if (!effects.history.includes('repair')) effects.history.push('repair');
  if (blockers.length > 0) return { blockers, effects, stopsOn: null };
  const kept = await keptMessagesEffects(db, deps, def, row, after);
  return { blockers, effects: mergeEffects(effects, kept.effects), stopsOn: kept.stopsOn };
}

export const releaseRepair: RepairHandler<RepairCommandOf<'instance.release'>, InstanceTarget> = {
  async plan(db, deps, cmd, target): Promise<RepairPlan> {
    const { stopsOn: _stopsOn, ...plan } = await planRelease(db, deps, cmd, target);
    return plan;
  },
  async perform(tx, deps, cmd, target) {
    // The plan just made under the lock says where the kept messages stop; what happened is compared with it,
    // so the answer and the audit row never contradict the instance (review 59).
    const predicted = (await planRelease(tx, deps, cmd, target)).stopsOn;
    const r = await releaseInTransaction(tx, deps.process, target.row.id, {
      mode: cmd.mode,
      operator: cmd.actor,
      reason: cmd.reason,
    });
    const stopped = r.stoppedOn?.messageId ?? null;
    if (stopped === predicted) return {};
    const effects = noEffects();
    if (stopped !== null) {
      effects.transitions.push({ subject: `instance ${target.row.id} status`, from: 'ACTIVE', to: 'QUARANTINED' });
      effects.notes.push(`kept message ${stopped} failed as it was applied: quarantined again on it`);
    } else effects.notes.push(`kept message ${predicted} went through after all: the instance is ACTIVE`);
    return { effects };
  },
};

async function parsedCommand(deps: RepairDeps, def: ProcessDefinition, cmd: RepairCommandOf<'instance.command'>) {
  try {
    return await parseOperator(deps, def, cmd);
  } catch (err) {
    // The operator command's own validation names its fields; a repair names them as it carries them.
    if (err instanceof EngineError && err.field === 'expectedState')
      throw new EngineError('invalid_input', err.message.replace(/^expectedState/, 'expected.state'), {
        field: 'expected.state',
      });
    throw err;
  }
}

function parseOperator(deps: RepairDeps, def: ProcessDefinition, cmd: RepairCommandOf<'instance.command'>) {
  return parseOperatorCommand(
    def,
    cmd.target.instanceId,
    {
      command: cmd.command,
      input: cmd.input,
      expectedState: cmd.expected.state,
      operator: cmd.actor,
      reason: cmd.reason,
      idempotencyKey: `repair:${cmd.idempotencyKey}`,
    },
    deps.process.limits,
  );
}

export const operatorCommandRepair: RepairHandler<RepairCommandOf<'instance.command'>, InstanceTarget> = {
  async plan(_db, deps, cmd, target) {
    const { row } = target;
    const def = definitionOf(target);
    const parsed = await parsedCommand(deps, def, cmd);
    const rejected = checkOperatorCommand(row, cmd.expected.state, parsed.spec);
    if (rejected)
      return {
        blockers: [`"${cmd.command}" is refused in ${rejected.currentState}: ${rejected.reason}`],
        effects: noEffects(),
      };
    const data = decoded(def, row);
    if ('blocker' in data) return { blockers: [data.blocker], effects: noEffects() };
    // The command's own code failing is repair_refused: a blocker in the preview, a refusal on apply.
    const decision = decideOperatorCommand(def, parsed, row, data.data);
    checkDecisionToStore(def, decision, row.id, deps.process.limits);
    return { blockers: [], effects: decisionEffects(row, decision) };
  },
  async perform(tx, deps, cmd, target) {
    const def = definitionOf(target);
    const r = await operatorCommandInTransaction(
      tx,
      deps.process,
      def,
      await parsedCommand(deps, def, cmd),
      cmd.expected.state,
    );
    if (r.outcome !== 'applied')
      throw new EngineError('repair_refused', `operator command "${cmd.command}" was ${r.outcome}`);
    return {};
  },
};

export const forceTransitionRepair: RepairHandler<RepairCommandOf<'instance.force_transition'>, InstanceTarget> = {
  async plan(_db, _deps, cmd, target) {
    const { row } = target;
    const def = definitionOf(target);
    if (!def.states.includes(cmd.to))
      throw new EngineError('invalid_input', `to: "${cmd.to}" is not a state of "${def.name}"`, { field: 'to' });
    const blockers: string[] = [];
    if (row.status === 'QUARANTINED') blockers.push('the instance is QUARANTINED: release it first');
    if (row.status === 'COMPLETED') blockers.push(`the instance is COMPLETED in final state ${row.current_state}`);
    const data = decoded(def, row);
    if ('blocker' in data) return { blockers: [...blockers, data.blocker], effects: noEffects() };
    const decision = applied(def, { state: row.current_state, data: data.data }, cmd.to, {}, [], false);
    return { blockers, effects: decisionEffects(row, decision) };
  },
  async perform(tx, deps, cmd, target, _p, { id }) {
    const { row } = target;
    const def = definitionOf(target);
    const data = decoded(def, row);
    if ('blocker' in data) throw new EngineError('repair_refused', data.blocker);
    const decision = applied(def, { state: row.current_state, data: data.data }, cmd.to, {}, [], false);
    // The instance's own transition write (version-checked save, inbox and history rows), under a
    // message id no incoming message can take (parseMessage refuses the `operator:` prefix).
    await applyDecision(
      tx,
      deps.process,
      def,
      row,
      { id: `operator:${row.id}:force:${id}`, type: 'operator:force_transition' },
      decision,
      { outcome: 'repair', detail: { operator: cmd.actor, reason: cmd.reason, forced: cmd.to, repair: id } },
    );
    return {};
  },
};
