import type { Logger } from 'pino';
import type { Json } from '../definitions/define-action.ts';
import type { Anomaly } from '../store/insert-anomaly.ts';

interface StepRef {
  runId: string;
  rowId: string;
  sequence: number;
  name: string;
  attempt: number;
}

/** The engine's in-process events, emitted after the transaction that recorded them committed. */
export interface EngineEventMap {
  'action.started': StepRef;
  'action.completed': StepRef & { output: Json };
  'action.failed': StepRef & { error: Json; willRetry: boolean };
  /** A worker finished but the row had changed hands: this is the last copy of what it produced. */
  'action.outcome_rejected': StepRef & { outcome: 'completed' | 'failed'; output: Json; error: Json };
  /** A rollback began (once per compensate() level). */
  'compensation.started': { runId: string; level: number; steps: number };
  'compensation.step_started': StepRef & { level: number };
  'compensation.completed': StepRef & { level: number; output: Json };
  'compensation.failed': StepRef & { level: number; error: Json; willRetry: boolean };
  'compensation.outcome_rejected': StepRef & {
    level: number;
    outcome: 'completed' | 'failed';
    output: Json;
    error: Json;
  };
  /** The monitor expired an overdue run and started its rollback (the compensations it will undo). */
  'run.expired': { runId: string; flowName: string; compensations: { actionSequence: number; name: string }[] };
  'run.finished': { runId: string; flowName: string; status: string; output: Json; error: Json };
}

export type EngineEventName = keyof EngineEventMap;
export type EngineListener<E extends EngineEventName> = (event: EngineEventMap[E]) => void | Promise<void>;

export interface EngineEvents {
  /** Subscribes; returns the unsubscribe function. */
  on<E extends EngineEventName>(name: E, listener: EngineListener<E>): () => void;
}

/** What {@link createEngineEvents}'s `emit` returns when nobody listens: already settled. */
const delivered: Promise<void> = Promise.resolve();

/**
 * A typed emitter that a throwing listener cannot break: the throw is logged, and for the two
 * rejection events, journaled as `rejection_undelivered` (the rejected payload is then gone).
 */
export function createEngineEvents(logger: Logger, journal: (a: Anomaly) => Promise<void>) {
  const listeners = new Map<EngineEventName, Set<EngineListener<never>>>();
  const emitter: EngineEvents = {
    on(name, listener) {
      const set = listeners.get(name) ?? new Set();
      listeners.set(name, set);
      set.add(listener);
      return () => set.delete(listener);
    },
  };
  async function deliver<E extends EngineEventName>(
    name: E,
    event: EngineEventMap[E],
    set: Set<EngineListener<never>>,
  ): Promise<void> {
    for (const listener of set) {
      try {
        await (listener as EngineListener<E>)(event);
      } catch (err) {
        if (name === 'action.outcome_rejected' || name === 'compensation.outcome_rejected') {
          const e = event as StepRef;
          await journal({
            code: 'rejection_undelivered',
            message: `a listener of ${name} threw; the rejected outcome is lost`,
            runId: e.runId,
            rowId: e.rowId,
            sequence: e.sequence,
            name: e.name,
            details: {
              error: err instanceof Error ? err.name : 'NonError',
              message: err instanceof Error ? err.message : String(err),
            },
          });
        } else {
          logger.error({ err, event: name }, 'an engine event listener threw');
        }
      }
    }
  }
  /**
   * Most events of a step have no listener (ADR 0049): then emitting costs no async frame and no
   * iteration, and `listens` lets a caller skip building the payload at all.
   */
  const listens = (name: EngineEventName): boolean => (listeners.get(name)?.size ?? 0) > 0;
  const emit = Object.assign(
    <E extends EngineEventName>(name: E, event: EngineEventMap[E]): Promise<void> => {
      const set = listeners.get(name);
      return set === undefined || set.size === 0 ? delivered : deliver(name, event, set);
    },
    { listens },
  );
  return { emitter, emit };
}

export type EmitEvent = ReturnType<typeof createEngineEvents>['emit'];
