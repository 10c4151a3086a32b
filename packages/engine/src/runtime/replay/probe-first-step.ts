import { setImmediate as nextMacrotask } from 'node:timers/promises';
import type { SqlDriver } from '../../db/database.ts';
import type { Json } from '../../definitions/define-action.ts';
import type { FlowDefinition } from '../../definitions/flow-context.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';
import type { DbFlowRun } from '../../store/find-run.ts';
import type { RuntimeDeps } from '../runtime-deps.ts';
import type { DbActionRun } from '../../store/list-action-runs.ts';
import { refusedValue } from '../../input/input-limits.ts';
import { createFlowContext } from './create-flow-context.ts';
import { ReplaySession, type FirstStepClaim } from './replay-session.ts';

/** What the handles of a replay whose run is not written yet throw: it must not reach the database. */
class RunNotWritten extends Error {
  override readonly name = 'RunNotWritten';
}

const refuse = (): never => {
  throw new RunNotWritten('the run is not written yet: its replay does not reach the database');
};
const noDriver: SqlDriver = { exec: refuse, query: refuse, raw: refuse, transaction: refuse, statement: refuse };
const noPrisma = new Proxy({}, { get: refuse }) as PrismaClient;

/** How the flow's code of a replay ended, when it did: what the run's end is written from. */
export type FlowSettled = { kind: 'ok'; output: Json } | { kind: 'threw'; error: unknown };

/**
 * The flow's code of `session`'s replay, begun: its return value or its throw, once it ends (a
 * stopped replay's code never ends: its pending step promises are abandoned, never rejected).
 */
export function runFlowCode(flow: FlowDefinition, session: ReplaySession): Promise<FlowSettled> {
  const ctx = createFlowContext(session);
  return Promise.resolve()
    .then(() => flow.run(ctx, session.run.input as Json))
    .then(
      (output): FlowSettled => {
        const value = output ?? null;
        // The flow's own output is refused as an action's is (ADR 0013, 0125): a value JSON cannot hold
        // exactly ends the run Failed naming it, instead of a finish that cannot be written (the run left
        // Running) or a converted value stored.
        const refused = refusedValue(session.deps.config.limits, value, 'output', `the flow's output`);
        return refused ? { kind: 'threw', error: refused } : { kind: 'ok', output: value };
      },
      (error: unknown): FlowSettled => ({ kind: 'threw', error }),
    );
}

/**
 * A probe's replay, held where it handed its first step's claim over (ADR 0097): the pool's replay
 * of the run goes on from there once the start wrote that claim, instead of running the flow's code
 * again from its first line up to the same point.
 */
export interface HeldReplay {
  /**
   * Hands the replay the real handles and the row the start wrote for its first step, and returns
   * it, with its flow's code's end, to go on as the pool's replay; null when it cannot go on (it
   * stopped since, or was taken or dropped before): the pool's replay then starts afresh, as before.
   */
  resume(deps: RuntimeDeps, firstStep: DbActionRun): { session: ReplaySession; settled: Promise<FlowSettled> } | null;
  /** Stops the replay for good: the start wrote no such claim, or no replay of this process takes it. */
  drop(): void;
}

/** A probe's first step claim, and the replay held there when it can go on (see {@link HeldReplay}). */
export interface ProbedStart {
  claim: FirstStepClaim;
  held: HeldReplay | null;
}

/**
 * Replays a run its start has not written yet (ADR 0048), from the row the start would write, up to
 * the replay's first durable write, and returns that write when it is a new action step's claim on
 * the one-statement path (ADR 0042): the start then writes it with the run. Null when anything else
 * comes first: a wait, a child, a parallel block, a value, the flow finishing or throwing, any error,
 * or no write before the next macrotask (flow code awaiting something outside the engine). Nothing
 * here reaches the database, the journal, the engine's events or the test faults: its handles refuse
 * any use (the refusal stops the replay like any engine fault), so whatever the code does, this
 * replay writes nothing, and the start goes on as it did before.
 *
 * With the claim, the replay is held at it, not stopped (ADR 0097): its step waits for the start's
 * row, and the pool's replay resumes it ({@link HeldReplay.resume}) with the real handles, so the
 * code before the first step runs once per start instead of twice. Anything the held replay does
 * before that (a second claim, any use of a handle) stops it for good, as it stopped the probe
 * before; the pool's replay then runs the code afresh.
 */
export async function probeFirstStep(
  deps: RuntimeDeps,
  flow: FlowDefinition,
  run: DbFlowRun,
): Promise<ProbedStart | null> {
  const offline: RuntimeDeps = {
    ...deps,
    prisma: noPrisma,
    driver: noDriver,
    faults: {},
    journal: () => Promise.resolve(),
    emit: Object.assign(() => Promise.resolve(), { listens: () => false }),
  };
  const session = new ReplaySession(offline, run, new Map(), []);
  session.runVersion = run.version;
  let claim: FirstStepClaim | null = null;
  let handOver: (row: DbActionRun | null) => void = () => undefined;
  let reached: () => void = () => undefined;
  const claimReached = new Promise<void>((resolve) => (reached = resolve));
  session.firstStepProbe = (first) => {
    // A second claim before the start's row came: this replay goes no further (the pool's starts afresh).
    if (claim !== null) {
      session.stop({ waitingFor: null, stuckReason: null });
      return Promise.resolve(null);
    }
    claim = first;
    reached();
    return new Promise<DbActionRun | null>((resolve) => (handOver = resolve));
  };
  const settled = runFlowCode(flow, session);
  await Promise.race([settled, session.parked, claimReached, nextMacrotask()]);
  const first = claim as FirstStepClaim | null;
  if (first === null || session.park) {
    // Whatever of the flow's code is still going finds its replay stopped: it goes no further.
    session.stop({ waitingFor: null, stuckReason: null });
    handOver(null);
    return first === null ? null : { claim: first, held: null };
  }
  let open = true;
  const drop = () => {
    if (!open) return;
    open = false;
    session.stop({ waitingFor: null, stuckReason: null });
    handOver(null);
  };
  return {
    claim: first,
    held: {
      resume(real, firstStep) {
        if (!open || session.park) {
          drop();
          return null;
        }
        open = false;
        // The handles the held code already holds are this object: from here on they are the real ones.
        Object.assign(offline, real);
        session.firstStepProbe = null;
        handOver(firstStep);
        return { session, settled };
      },
      drop,
    },
  };
}
