import type { z } from 'zod';
import type { Json } from '../definitions/define-action.ts';
import type { StandardSchemaV1 } from '../definitions/standard-schema.ts';
import { EngineError } from '../errors/engine-error.ts';

/** A command a transition decides to send. It is written to the outbox in the transition's transaction. */
export interface EmittedCommand {
  type: string;
  /** The route the outbox publisher delivers it to (a handler name, a webhook, a broker subject). */
  destination: string;
  payload: Json;
  headers?: Record<string, string>;
}

/** A timeout a transition arms: a named entry of the definition's `timeouts`, optionally with a payload. */
export interface ScheduledTimeout {
  name: string;
  payload?: { [key: string]: Json };
}

/** What a transition's `then` returns. Everything is optional: a bare state change is fine. */
export interface TransitionResult<D> {
  data?: D;
  emit?: readonly EmittedCommand[];
  schedule?: readonly ScheduledTimeout[];
}

/** What a timeout message carries: the payload it was armed with, plus the state it expects. */
export type TimeoutPayload = { [key: string]: Json } & { expectedState: string };

export interface TransitionSpec<S extends string, D, P> {
  from: S | readonly S[];
  to: S;
  /** Pure: may this message move the instance? The first matching transition whose guard passes wins. */
  guard?: (data: D, payload: P) => boolean;
  /** Pure: the new data, the commands to emit and the timeouts to arm. */
  then?: (data: D, payload: P, instance: { key: string }) => TransitionResult<D>;
  /** Timeouts armed by this transition, by name (in addition to any `then` returns). */
  schedule?: readonly string[];
  /** Marks a late message a compensating state still accepts (documentation and history detail). */
  late?: boolean;
}

export interface TimeoutSpec<S extends string> {
  /** How long after the transition that arms it the timeout is due. Hours are fine: it is a row, not a sleep. */
  afterMs: number;
  /**
   * The state the timeout is about: a transition to it arms the timeout, which fires only while the
   * instance is still in that visit to it. Left (even if it came back since), it is a recorded no-op.
   */
  expects: S;
}

export interface OperatorCommandSpec<S extends string, D, I> {
  /** States in which the command may be applied. */
  from: readonly S[];
  to: S;
  /** Pure, like a transition. */
  then?: (data: D, input: I, instance: { key: string }) => TransitionResult<D>;
  /** For the console's form: what the command does, in a sentence. */
  description?: string;
}

/**
 * Message and operator-command schemas: any Standard Schema validator (zod 4, valibot, arktype), as
 * for flows and actions (ADR 0023). The instance's `data` stays a zod schema: it is decoded
 * synchronously wherever an instance is read.
 */
type Schemas = Record<string, StandardSchemaV1>;
/** What a schema produces (its Standard Schema output type). */
type Out<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];
/** A message of this process as the correlation function sees it: a union over the declared types. */
export type ProcessMessageOf<M extends Schemas> = {
  [K in keyof M & string]: { id: string; type: K; payload: Out<M[K]> };
}[keyof M & string];

export interface ProcessSpec<
  S extends string,
  DS extends z.ZodType,
  M extends Schemas,
  T extends Record<string, TimeoutSpec<S>>,
  O extends Schemas,
> {
  name: string;
  states: readonly S[];
  initial: S;
  /** States in which the instance is COMPLETED. No transition may leave one. */
  final: readonly S[];
  /** The instance's own data; stored as JSON and decoded with this schema. */
  data: DS;
  initialData: (key: string) => z.output<DS>;
  /** Accepted message types and their payload schemas. A message of another type is refused before any write. */
  messages: M;
  /** Message → instance key. A message with a transition out of `initial` starts an instance. */
  correlate: (message: ProcessMessageOf<NoInfer<M>>) => string;
  timeouts?: T;
  /** The transition table: per message or timeout type, the transitions it may take. */
  on: {
    [K in keyof NoInfer<M> | keyof NoInfer<T>]?: readonly TransitionSpec<
      S,
      z.output<DS>,
      K extends keyof M ? Out<M[K]> : TimeoutPayload
    >[];
  };
  /** Compensating states and the outcomes they may end in (e.g. Refunding → Compensated | ManualReview). */
  compensating?: Partial<Record<S, readonly S[]>>;
  /** Typed repair commands: their input schemas, and what each does. */
  operatorInputs?: O;
  operatorCommands?: { [K in keyof O]: OperatorCommandSpec<S, z.output<DS>, Out<O[K]>> };
}

/** A process definition as the runtime sees it, with its types erased. */
export interface ProcessDefinition {
  readonly kind: 'process';
  readonly name: string;
  readonly states: readonly string[];
  readonly initial: string;
  readonly final: readonly string[];
  readonly data: z.ZodType;
  readonly initialData: (key: string) => unknown;
  readonly messages: Schemas;
  readonly correlate: (message: { id: string; type: string; payload: unknown }) => string;
  readonly timeouts: Record<string, TimeoutSpec<string>>;
  readonly on: Record<string, readonly TransitionSpec<string, unknown, unknown>[] | undefined>;
  readonly compensating: Record<string, readonly string[] | undefined>;
  readonly operatorInputs: Schemas;
  readonly operatorCommands: Record<string, OperatorCommandSpec<string, unknown, unknown>>;
}

function invalid(name: string, message: string): never {
  throw new EngineError('invalid_definition', `process "${name}": ${message}`);
}

/**
 * Declares a process manager: a state machine that reacts to messages. Transition functions are
 * pure (data in, data and decisions out), so the state table is unit-testable with {@link decide};
 * `deliver` runs them inside one transaction with the inbox, the instance lock and the outbox.
 *
 * @example
 * const p = defineProcess({
 *   name: 'order-fulfilment', states: ['AwaitingPayment', 'ReservingInventory', 'Completed'],
 *   initial: 'AwaitingPayment', final: ['Completed'], data: z.object({ orderId: z.string() }),
 *   initialData: (orderId) => ({ orderId }),
 *   messages: { PaymentCaptured: z.object({ orderId: z.string() }) },
 *   correlate: (m) => m.payload.orderId,
 *   on: { PaymentCaptured: [{ from: 'AwaitingPayment', to: 'ReservingInventory',
 *     then: (d) => ({ emit: [{ type: 'ReserveInventory', destination: 'inventory', payload: d }] }) }] },
 * });
 */
export function defineProcess<
  const S extends string,
  DS extends z.ZodType,
  M extends Schemas,
  T extends Record<string, TimeoutSpec<S>> = Record<never, TimeoutSpec<S>>,
  O extends Schemas = Record<never, StandardSchemaV1>,
>(spec: ProcessSpec<S, DS, M, T, O>): ProcessDefinition {
  const { name } = spec;
  if (!name) invalid('', 'name must not be empty');
  const states = new Set<string>(spec.states);
  const isState = (s: string, where: string) => {
    if (!states.has(s)) invalid(name, `${where} names unknown state "${s}"`);
  };
  isState(spec.initial, 'initial');
  for (const s of spec.final) isState(s, 'final');
  const timeouts = (spec.timeouts ?? {}) as Record<string, TimeoutSpec<string>>;
  for (const [t, ts] of Object.entries(timeouts)) {
    if (t in spec.messages) invalid(name, `timeout "${t}" has the name of a message`);
    isState(ts.expects, `timeout "${t}"`);
    if (!Number.isInteger(ts.afterMs) || ts.afterMs < 0) invalid(name, `timeout "${t}" needs afterMs >= 0`);
  }
  const on = spec.on as Record<string, readonly TransitionSpec<string, unknown, unknown>[] | undefined>;
  for (const [type, list] of Object.entries(on)) {
    if (!(type in spec.messages) && !(type in timeouts)) invalid(name, `transitions on unknown message "${type}"`);
    for (const t of list ?? []) {
      for (const f of typeof t.from === 'string' ? [t.from] : t.from) {
        isState(f, `a transition on ${type}`);
        if (spec.final.includes(f as S)) invalid(name, `a transition on ${type} leaves final state "${f}"`);
      }
      isState(t.to, `a transition on ${type}`);
      for (const s of t.schedule ?? []) {
        const armed = timeouts[s];
        if (!armed) invalid(name, `${type} schedules unknown timeout "${s}"`);
        // A timeout belongs to the state visit that armed it: it must expect the state entered.
        if (armed.expects !== t.to)
          invalid(name, `${type} arms timeout "${s}", which expects "${armed.expects}", on a transition to "${t.to}"`);
      }
    }
  }
  const compensating = (spec.compensating ?? {}) as Record<string, readonly string[] | undefined>;
  for (const [state, outcomes] of Object.entries(compensating)) {
    isState(state, 'compensating');
    for (const o of outcomes ?? []) {
      isState(o, `compensating state "${state}"`);
      const reachable = Object.values(on).some((list) =>
        (list ?? []).some((t) => t.to === o && (t.from === state || (t.from as readonly string[]).includes(state))),
      );
      if (!reachable) invalid(name, `compensating state "${state}" has no transition to "${o}"`);
    }
  }
  const operatorInputs = spec.operatorInputs ?? {};
  const operatorCommands = (spec.operatorCommands ?? {}) as Record<
    string,
    OperatorCommandSpec<string, unknown, unknown>
  >;
  for (const [c, cmd] of Object.entries(operatorCommands)) {
    if (!(c in operatorInputs)) invalid(name, `operator command "${c}" has no input schema in operatorInputs`);
    for (const f of cmd.from) {
      isState(f, `operator command "${c}"`);
      // An operator command is a transition like any other (ADR 0008): none may leave a final state.
      if (spec.final.includes(f as S)) invalid(name, `operator command "${c}" leaves final state "${f}"`);
    }
    isState(cmd.to, `operator command "${c}"`);
  }
  return {
    kind: 'process',
    name,
    states: [...spec.states],
    initial: spec.initial,
    final: [...spec.final],
    data: spec.data,
    initialData: spec.initialData,
    messages: spec.messages,
    correlate: spec.correlate,
    timeouts,
    on,
    compensating,
    operatorInputs,
    operatorCommands,
  };
}

/** The transitions of a definition that may start an instance: those out of its initial state. */
export function startsInstance(def: ProcessDefinition, type: string): boolean {
  return (def.on[type] ?? []).some((t) =>
    typeof t.from === 'string' ? t.from === def.initial : t.from.includes(def.initial),
  );
}
