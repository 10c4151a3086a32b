import type { ActionDefinition, Json, RetryPolicy } from './define-action.ts';
import type { StandardSchemaV1 } from './standard-schema.ts';

/**
 * One step of a flow, configured fluently and run by awaiting it (or calling `run()`).
 * Per-step settings are resolved once, when the step is scheduled, and persisted on its row.
 */
export interface StepBuilder<O extends Json> extends PromiseLike<O> {
  /** Registers `compensation` once this step has succeeded; its input may depend on the result. */
  compensateWith<CI extends Json>(compensation: ActionDefinition<CI, Json>, input: (output: O) => CI): StepBuilder<O>;
  /** Overrides the action's retry policy for this step. */
  retry(policy: RetryPolicy): StepBuilder<O>;
  /** A Running row older than this may be claimed again (and implies reclaim is on for this step). */
  reclaimStaleAfter(seconds: number): StepBuilder<O>;
  /** true: reclaim with config's after_seconds even if config disables it; false: never reclaim this step. */
  enableStaleReclaim(enabled: boolean): StepBuilder<O>;
  reclaimCompensationStaleAfter(seconds: number): StepBuilder<O>;
  enableCompensationStaleReclaim(enabled: boolean): StepBuilder<O>;
  /** The step's business deadline, from when it is scheduled (enforced by the monitor). */
  expiresIn(seconds: number): StepBuilder<O>;
  run(): Promise<O>;
}

export type StepOutputs<T extends readonly StepBuilder<Json>[]> = {
  -readonly [K in keyof T]: T[K] extends StepBuilder<infer O> ? O : never;
};

export interface CompensateOptions {
  /** Run this level's compensations concurrently. Default: the flow's setting, else sequential. */
  parallel?: boolean;
  /** Keep going past a failing compensation (and do not throw). Default: the flow's setting, else false. */
  continueWithError?: boolean;
}

/** What a flow's code sees. Everything it does goes through here so replay can reproduce it. */
export interface FlowContext {
  readonly runId: string;
  readonly flowName: string;
  /** True once cancellation was requested and delivered; compensations still run in the cleanup window. */
  readonly cancellationRequested: boolean;
  /** Runs (or, on replay, returns the recorded result of) the next step. */
  action<I extends Json, O extends Json>(action: ActionDefinition<I, O>, input: I): StepBuilder<O>;
  /** Runs the given steps concurrently and resolves with their outputs in order. */
  parallel<T extends readonly StepBuilder<Json>[]>(steps: T): Promise<StepOutputs<T>>;
  /** Registers a compensation directly (seed 001's addCompensation). */
  addCompensation<I extends Json>(compensation: ActionDefinition<I, Json>, input: I): void;
  /** Runs every registered compensation not yet run, newest first. */
  compensate(options?: CompensateOptions): Promise<void>;
  setParallelCompensation(parallel: boolean): void;
  setContinueWithError(continueWithError: boolean): void;
  /** Waits for a signal; resolves its payload (true when sent without one), or null once `timeoutSeconds` pass. */
  awaitSignal<T extends Json = Json>(name: string, options: { timeoutSeconds: number }): Promise<T | null>;
  /** A durable timer: the run parks and no worker is held while it waits. */
  sleep(seconds: number): Promise<void>;
  /**
   * Starts a child flow and waits for its result; `cancellation` says whether cancelling this run reaches it.
   * `input` is what the child's input schema accepts (defaults may be left out); its code gets what the
   * schema produced.
   */
  child<I extends Json, O extends Json, In = I>(
    flow: FlowDefinition<I, O, In>,
    input: NoInfer<In>,
    options?: { cancellation?: 'propagate' | 'abandon' },
  ): Promise<O>;
  /** The time, recorded on first use so every replay sees the same value. */
  now(): Date;
  /** A random number in [0, 1), recorded on first use. */
  random(): number;
  /** A random UUID, recorded on first use. */
  uuid(): string;
}

/**
 * A flow. `I` is the input its code receives (what its input schema produced), `O` its result, `In`
 * what a caller passes to start it (`startFlow`, `runToCompletion`, `ctx.child`): the schema's input
 * type, where a field with a default may be left out. Without a schema the two are the same.
 */
export interface FlowDefinition<I extends Json = Json, O extends Json = Json, In = I> {
  readonly kind: 'flow';
  readonly name: string;
  readonly version: number;
  readonly run: (ctx: FlowContext, input: I) => Promise<O>;
  /** The schemas the flow declared: start, signal and the control plane's forms use them. */
  readonly schemas: FlowSchemas<In>;
}

/**
 * Any flow, whatever its types: what `createEngine` and the test kit take in their `flows` list.
 */
export type AnyFlowDefinition = FlowDefinition<never, Json, unknown>;

/** Optional Standard Schema validators for a flow's input, result and signal payloads. */
export interface FlowSchemas<In = unknown> {
  /** Accepts what a caller passes to start the flow (`In`); what it produces is the flow code's input. */
  readonly input?: StandardSchemaV1<In, unknown> | undefined;
  readonly output?: StandardSchemaV1 | undefined;
  /** When given, the flow takes exactly these signals: another name is refused, like a bad payload. */
  readonly signals?: Readonly<Record<string, StandardSchemaV1>> | undefined;
}
