import { setImmediate as nextMacrotask } from 'node:timers/promises';
import type { SqlDriver } from '../../db/database.ts';
import type { Json } from '../../definitions/define-action.ts';
import type { FlowDefinition } from '../../definitions/flow-context.ts';
import type { PrismaClient } from '../../generated/prisma/client.ts';
import type { DbFlowRun } from '../../store/find-run.ts';
import type { RuntimeDeps } from '../runtime-deps.ts';
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

/**
 * Replays a run its start has not written yet (ADR 0048), from the row the start would write, up to
 * the replay's first durable write, and returns that write when it is a new action step's claim on
 * the one-statement path (ADR 0042): the start then writes it with the run. Null when anything else
 * comes first: a wait, a child, a parallel block, a value, the flow finishing or throwing, any error,
 * or no write before the next macrotask (flow code awaiting something outside the engine). Nothing
 * here reaches the database, the journal, the engine's events or the test faults: its handles refuse
 * any use (the refusal stops the replay like any engine fault), so whatever the code does, this
 * replay writes nothing, and the start goes on as it did before.
 */
export async function probeFirstStep(
  deps: RuntimeDeps,
  flow: FlowDefinition,
  run: DbFlowRun,
): Promise<FirstStepClaim | null> {
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
  session.firstStepProbe = (first) => {
    claim = first;
    session.stop({ waitingFor: null, stuckReason: null });
  };
  const ctx = createFlowContext(session);
  await Promise.race([
    Promise.resolve()
      .then(() => flow.run(ctx, run.input as Json))
      .then(
        () => undefined,
        () => undefined,
      ),
    session.parked,
    nextMacrotask(),
  ]);
  // Whatever of the flow's code is still going finds its replay stopped: it goes no further.
  session.stop({ waitingFor: null, stuckReason: null });
  return claim;
}
