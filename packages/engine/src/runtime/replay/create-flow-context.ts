import { randomUUID } from 'node:crypto';
import type { ActionDefinition, Json, RetryPolicy } from '../../definitions/define-action.ts';
import type { FlowContext, FlowDefinition, StepBuilder } from '../../definitions/flow-context.ts';
import type { EngineError } from '../../errors/engine-error.ts';
import { refusedValue } from '../../input/input-limits.ts';
import { childInput } from '../child-input.ts';
import { FlowError, recordedMessage } from '../flow-error.ts';
import { resolveReclaimSeconds, type ReclaimOverride } from '../resolve-reclaim.ts';
import { runActionStep, type ActionStepResult, type ActionStepSpec } from '../steps/action-step.ts';
import { runChildStep } from '../steps/child-step.ts';
import { runCompensateStep } from '../steps/compensate-step.ts';
import { cancelledError } from '../steps/deliver-cancel.ts';
import { runParallelStep } from '../steps/parallel-step.ts';
import { valueStep } from '../steps/value-step.ts';
import { runWaitStep, type WaitResult } from '../steps/wait-step.ts';
import { internal, never, type ReplaySession } from './replay-session.ts';

interface BuilderState {
  action: ActionDefinition<Json, Json>;
  input: Json;
  retry: RetryPolicy;
  reclaim: ReclaimOverride;
  compensationReclaim: ReclaimOverride;
  expiresInSeconds: number | null;
  compensation: { action: ActionDefinition<Json, Json>; input: (output: Json) => Json } | null;
  started: boolean;
}

const builderState = new WeakMap<object, BuilderState>();

/** Turns a step's result into what the flow sees: a value, a FlowError, or a stop. */
function settle<T>(session: ReplaySession, seq: number, name: string, r: ActionStepResult | WaitResult): Promise<T> {
  switch (r.kind) {
    case 'completed':
      return Promise.resolve(r.output as T);
    case 'errored':
      return Promise.reject(
        new FlowError('action_failed', `step ${seq} (${name}) failed: ${recordedMessage(r.error)}`, r.error, seq),
      );
    case 'cancelled':
      return Promise.reject(cancelledError(session, seq));
    case 'blocked':
      return never<T>();
    case 'pending':
      session.stop({ waitingFor: r.waitingFor, stuckReason: r.stuckReason ?? null });
      return never<T>();
    case 'waiting':
      session.stop({ waitingFor: r.waitingFor, stuckReason: null });
      return never<T>();
  }
}

function register(session: ReplaySession, state: BuilderState, seq: number, output: Json): void {
  if (!state.compensation) return;
  session.compensations.push({
    actionSequence: seq,
    name: state.compensation.action.name,
    input: state.compensation.input(output),
    reclaimAfterSeconds: resolveCompReclaim(session, state.compensationReclaim),
  });
}

/**
 * The refusal of the first of `states` (the steps about to take the next sequences) whose input JSON
 * cannot hold exactly (ADR 0125), or null. A step already recorded is not checked: its row's input is
 * what it runs with. Nothing is written and no sequence is taken: the flow's code gets the error where
 * it awaits the step, and a replay of the same code meets it at the same place.
 */
function refusedInput(session: ReplaySession, states: readonly BuilderState[]): EngineError | null {
  for (const [i, state] of states.entries()) {
    const seq = session.sequence + 1 + i;
    if (session.recorded.has(seq)) continue;
    const refused = refusedValue(
      session.deps.config.limits,
      state.input,
      'input',
      `step ${seq} (${state.action.name})`,
    );
    if (refused) return refused;
  }
  return null;
}

function resolveCompReclaim(session: ReplaySession, o: ReclaimOverride): number | null {
  return resolveReclaimSeconds(o, session.deps.config.reclaim.compensations);
}

function specOf(s: BuilderState): Omit<ActionStepSpec, 'parallelBlock'> {
  return { action: s.action, input: s.input, retry: s.retry, reclaim: s.reclaim, expiresInSeconds: s.expiresInSeconds };
}

function claimBuilder(b: object): BuilderState {
  const state = builderState.get(b);
  if (!state) throw new TypeError('ctx.parallel() takes steps made by ctx.action()');
  if (state.started) throw new TypeError(`step ${state.action.name} was already run; a step builder runs once`);
  state.started = true;
  return state;
}

/**
 * Builds the `ctx` a flow's code runs against for one replay. Its helpers live at module level, not
 * as closures made per replay (twice per run that its start probed, ADR 0058).
 */
export function createFlowContext(session: ReplaySession): FlowContext {
  const { deps } = session;

  const ctx: FlowContext = {
    runId: session.runId,
    flowName: session.run.flow_name,
    get cancellationRequested() {
      return session.cancellationDelivered;
    },

    action<I extends Json, O extends Json>(action: ActionDefinition<I, O>, input: I): StepBuilder<O> {
      const state: BuilderState = {
        action: action as unknown as ActionDefinition<Json, Json>,
        input,
        retry: action.retry,
        reclaim: {},
        compensationReclaim: {},
        expiresInSeconds: null,
        compensation: null,
        started: false,
      };
      let promise: Promise<O> | null = null;
      const run = (): Promise<O> => {
        if (promise) return promise;
        claimBuilder(builder);
        if (session.park) return (promise = never<O>());
        const refused = refusedInput(session, [state]);
        if (refused) return (promise = Promise.reject(refused));
        const seq = session.nextSequence();
        promise = internal(session, () => runActionStep(session, seq, { ...specOf(state), parallelBlock: null })).then(
          (r) => {
            if (r.kind !== 'completed') return settle<O>(session, seq, action.name, r);
            register(session, state, seq, r.output);
            // The value itself, not a promise of it: a promise returned here costs two more ticks.
            return r.output as O;
          },
        );
        return promise;
      };
      const builder: StepBuilder<O> = {
        compensateWith(compensation, map) {
          state.compensation = {
            action: compensation as unknown as ActionDefinition<Json, Json>,
            input: map as unknown as (o: Json) => Json,
          };
          return builder;
        },
        retry(policy) {
          state.retry = { ...state.retry, ...policy };
          return builder;
        },
        reclaimStaleAfter(seconds) {
          state.reclaim.afterSeconds = seconds;
          return builder;
        },
        enableStaleReclaim(enabled) {
          state.reclaim.enabled = enabled;
          return builder;
        },
        reclaimCompensationStaleAfter(seconds) {
          state.compensationReclaim.afterSeconds = seconds;
          return builder;
        },
        enableCompensationStaleReclaim(enabled) {
          state.compensationReclaim.enabled = enabled;
          return builder;
        },
        expiresIn(seconds) {
          state.expiresInSeconds = seconds;
          return builder;
        },
        run,
        then(onFulfilled, onRejected) {
          return run().then(onFulfilled, onRejected);
        },
      };
      builderState.set(builder, state);
      return builder;
    },

    async parallel(steps) {
      const states = steps.map((s) => claimBuilder(s));
      if (session.park) return never();
      const refused = refusedInput(session, states);
      if (refused) throw refused;
      const base = session.sequence;
      const results = await internal(session, () => runParallelStep(session, states.map(specOf)));
      // Every branch that succeeded registers its compensation before anything else is decided: a
      // rollback after a failed block undoes exactly the branches that went through, and a rollback
      // planned while a branch is still out (a cancel's or an expiry's plan, which stops here) names
      // the branches already done (review 20, ADR 0088). A live replay that parks here drops them
      // with the rest of its memory.
      results.forEach((r, i) => {
        const state = states[i];
        if (state && r.kind === 'completed') register(session, state, base + i + 1, r.output);
      });
      // The block is settled only when every branch is: while one is still running (here or
      // elsewhere) or waiting for a retry, the run parks, whatever the others did.
      if (results.some((r) => r.kind === 'blocked')) return never();
      const pending =
        results.find((r) => r.kind === 'pending' && r.stuckReason) ?? results.find((r) => r.kind === 'pending');
      if (pending?.kind === 'pending') {
        session.stop({ waitingFor: pending.waitingFor, stuckReason: pending.stuckReason ?? null });
        return never();
      }
      const outputs: Json[] = [];
      for (const [i, r] of results.entries())
        outputs.push(await settle<Json>(session, base + i + 1, states[i]?.action.name ?? '', r));
      return outputs as never;
    },

    addCompensation(compensation, input) {
      session.compensations.push({
        actionSequence: session.sequence,
        name: compensation.name,
        input,
        reclaimAfterSeconds: resolveCompReclaim(session, {}),
      });
    },
    async compensate(options = {}) {
      if (session.park) return never();
      const r = await internal(session, () =>
        runCompensateStep(session, {
          parallel: options.parallel ?? session.parallelCompensation,
          continueWithError: options.continueWithError ?? session.continueWithError,
        }),
      );
      if (r.kind === 'ok') return;
      if (r.kind === 'failed') {
        throw new FlowError(
          'compensation_failed',
          `compensation of step ${r.sequence} failed: ${recordedMessage(r.error)}`,
          r.error,
          r.sequence,
        );
      }
      if (r.kind === 'unfinished') {
        throw new FlowError(
          'compensation_unfinished',
          `rollback ended with compensations not finished: ${r.rows.map((x) => `step ${x.sequence} ${x.name} (${x.status})`).join(', ')}`,
          r.rows,
        );
      }
      session.stop({ waitingFor: r.waitingFor, stuckReason: r.stuckReason ?? null });
      return never();
    },
    setParallelCompensation(parallel) {
      session.parallelCompensation = parallel;
    },
    setContinueWithError(continueWithError) {
      session.continueWithError = continueWithError;
    },

    async awaitSignal<T extends Json>(name: string, options: { timeoutSeconds: number }): Promise<T | null> {
      if (session.park) return never();
      const seq = session.nextSequence();
      const r = await internal(session, () =>
        runWaitStep(session, seq, { kind: 'signal', name, seconds: options.timeoutSeconds }),
      );
      return settle<T | null>(session, seq, `signal ${name}`, r);
    },
    async sleep(seconds) {
      if (session.park) return never();
      const seq = session.nextSequence();
      const r = await internal(session, () => runWaitStep(session, seq, { kind: 'timer', name: 'sleep', seconds }));
      await settle<Json>(session, seq, 'sleep', r);
    },
    async child<I extends Json, O extends Json, In = I>(
      flow: FlowDefinition<I, O, In>,
      given: In,
      options: { cancellation?: 'propagate' | 'abandon' } = {},
    ): Promise<O> {
      if (session.park) return never();
      const seq = session.nextSequence();
      // Before anything async: a run that asked for a child ends in a transaction that sees its open
      // children, never in the one-statement finish (ADR 0093).
      session.askedForChild = true;
      // Asked for before the code could see a cancellation: cancelled with its parent, if the parent is.
      const cancelWithParent = !session.cancellationRaised;
      // A child not started yet gets its input checked against its own schema first, as startFlow
      // would; a recorded one keeps the input it was started with.
      // What a caller may pass is the schema's input type; with no schema it is the flow's own, JSON.
      const input = given as unknown as Json;
      const checked = session.recorded.has(seq) ? input : await childInput(deps.config.limits, flow, seq, input);
      const r = await internal(session, () =>
        runChildStep(session, seq, {
          flowName: flow.name,
          flowVersion: flow.version,
          input: checked,
          cancellation: options.cancellation ?? 'propagate',
          cancelWithParent,
        }),
      );
      if (r.kind === 'errored') {
        return Promise.reject(
          new FlowError(
            'child_failed',
            `child flow ${flow.name} (step ${seq}) did not complete: ${recordedMessage(r.error)}`,
            r.error,
            seq,
          ),
        );
      }
      return settle<O>(session, seq, flow.name, r);
    },

    now() {
      const v = valueStep(session, 'now', () => deps.clock.now().toISOString());
      return new Date(typeof v === 'string' ? v : 0);
    },
    random() {
      const v = valueStep(session, 'random', () => Math.random());
      return typeof v === 'number' ? v : 0;
    },
    uuid() {
      const v = valueStep(session, 'uuid', () => randomUUID());
      return typeof v === 'string' ? v : '00000000-0000-0000-0000-000000000000';
    },
  };
  return ctx;
}
