import type { Json } from '../definitions/define-action.ts';
import { EngineError } from '../errors/engine-error.ts';
import type { EmittedCommand, ProcessDefinition, TransitionSpec } from './define-process.ts';

/** An instance as a transition sees it: its state name and its decoded data. */
export interface ProcessSnapshot {
  state: string;
  data: unknown;
  /** Which entry into `state` this is (stored as `state_visit`); timeouts of another visit are stale. */
  visit?: number;
}

/** A message as `decide` sees it. Timeouts carry the state they expect. */
export interface DecideMessage {
  type: string;
  payload: unknown;
  /** Set on timeout messages: delivered in any other state, the timeout is stale. */
  expectedState?: string;
  /**
   * Set on timeout messages: the visit to the expected state that armed it. An instance that left
   * the state and came back is in another visit, where the timeout is stale too.
   */
  armedVisit?: number;
}

export interface ArmedTimeout {
  name: string;
  expectedState: string;
  afterMs: number;
  payload: { [key: string]: Json };
}

export type IgnoreReason = 'not_accepted_in_state' | 'guard_rejected' | 'stale_timeout';

export type Decision =
  | {
      kind: 'applied';
      from: string;
      to: string;
      data: unknown;
      commands: EmittedCommand[];
      timeouts: ArmedTimeout[];
      late: boolean;
      /** The new state is final: the instance is COMPLETED. */
      completes: boolean;
    }
  | { kind: 'ignored'; state: string; reason: IgnoreReason };

function fromIncludes(t: TransitionSpec<string, unknown, unknown>, state: string): boolean {
  return typeof t.from === 'string' ? t.from === state : t.from.includes(state);
}

/**
 * The state table, as a pure function: given an instance and one message, the next state, data,
 * commands and timeouts, or why the message changes nothing. No I/O, no clock: seed 004's "test the
 * state table" is a plain unit test of this.
 */
export function decide(
  def: ProcessDefinition,
  snapshot: ProcessSnapshot,
  message: DecideMessage,
  instance: { key: string } = { key: '' },
): Decision {
  const ignored = (reason: IgnoreReason): Decision => ({ kind: 'ignored', state: snapshot.state, reason });
  // A state an earlier version of the definition had: nothing here can say what the message means in
  // it. Like stored data that no longer decodes, it is a failure (recorded, quarantined past the
  // budget, kept for a release or a forced transition), never a no-op that marks the message handled.
  if (!def.states.includes(snapshot.state))
    throw new EngineError(
      'state_undecodable',
      `process "${def.name}": the instance is in state "${snapshot.state}", which this definition does not have; ${message.type} was not applied`,
    );
  if (message.expectedState !== undefined && message.expectedState !== snapshot.state) return ignored('stale_timeout');
  if (message.armedVisit !== undefined && snapshot.visit !== undefined && message.armedVisit !== snapshot.visit)
    return ignored('stale_timeout');
  // A live timer armed under a timeout name the definition dropped (renamed in a new version): the
  // deadline is the business contract, so it fails (stays armed, retried) rather than fire as a no-op.
  if (message.expectedState !== undefined && !Object.hasOwn(def.timeouts, message.type))
    throw new EngineError(
      'state_undecodable',
      `process "${def.name}": timeout "${message.type}" is due in "${snapshot.state}", but this definition has no timeout of that name; it stays armed`,
    );
  const candidates = (def.on[message.type] ?? []).filter((t) => fromIncludes(t, snapshot.state));
  if (candidates.length === 0) return ignored('not_accepted_in_state');
  const chosen = candidates.find((t) => t.guard?.(snapshot.data, message.payload) ?? true);
  if (!chosen) return ignored('guard_rejected');
  const result = chosen.then?.(snapshot.data, message.payload, instance) ?? {};
  return applied(def, snapshot, chosen.to, result, chosen.schedule ?? [], chosen.late ?? false);
}

/** Builds the applied decision for a transition (or an operator command) that was chosen. */
export function applied(
  def: ProcessDefinition,
  snapshot: ProcessSnapshot,
  to: string,
  result: {
    data?: unknown;
    emit?: readonly EmittedCommand[];
    schedule?: readonly { name: string; payload?: { [key: string]: Json } }[];
  },
  staticSchedule: readonly string[],
  late: boolean,
): Decision & { kind: 'applied' } {
  const arm = (name: string, payload: { [key: string]: Json } = {}): ArmedTimeout => {
    const spec = def.timeouts[name];
    if (!spec) throw new Error(`process "${def.name}" schedules unknown timeout "${name}"`);
    // A timeout belongs to the visit its transition enters; one expecting another state could never fire.
    if (spec.expects !== to)
      throw new EngineError(
        'invalid_definition',
        `process "${def.name}": timeout "${name}" expects "${spec.expects}" but is armed by a transition to "${to}"`,
      );
    return { name, expectedState: spec.expects, afterMs: spec.afterMs, payload };
  };
  return {
    kind: 'applied',
    from: snapshot.state,
    to,
    data: result.data === undefined ? snapshot.data : result.data,
    commands: [...(result.emit ?? [])],
    timeouts: [...staticSchedule.map((n) => arm(n)), ...(result.schedule ?? []).map((s) => arm(s.name, s.payload))],
    late,
    completes: def.final.includes(to),
  };
}
