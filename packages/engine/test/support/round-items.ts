import type { Database } from '../../src/db/database.ts';
import type { FusableDeps } from '../../src/runtime/replay/fused-outcome.ts';
import { roundLimits, transitionInBatch } from '../../src/runtime/run-statement-batches.ts';
import type { StartedRun } from '../../src/store/insert-started-run.ts';
import type { TopRunFinish } from '../../src/store/finish-top-runs.ts';
import {
  stepTransitionResults,
  stepTransitionsStatement,
  type StepTransition,
  type TransitionOutcome,
  type TransitionResult,
} from '../../src/store/step-transitions.ts';
import { activeRun } from './active-run.ts';
import type { SentStatement } from './count-statements.ts';

/** A claim of step `sequence` of `runId` by `workerId`, as the replay submits a new step's transition (ADR 0042). */
export const stepClaim = (
  workerId: string,
  runId: string,
  sequence: number,
  name = `step-${sequence}`,
): StepTransition => ({
  step: { runId, sequence, kind: 'action', name, input: { n: sequence }, reclaimAfterSeconds: 30 },
  workerId,
  now: new Date(),
  cancellationKnown: false,
  started: { type: 'action.started', sequence, data: {} },
});

/** A start of `flowName` as the API submits it to its batch, leased to `workerId` (a business key makes it unique). */
export const startOf = (
  flowName: string,
  workerId: string,
  businessKey: string | null,
  input: unknown = null,
): StartedRun => ({
  flowName,
  flowVersion: 1,
  input: input as StartedRun['input'],
  businessKey,
  tags: [],
  expiresAt: null,
  runTimeoutAt: null,
  now: new Date(),
  lease: { workerId, leaseSeconds: 60 },
});

/**
 * Makes the active run `runId` ready to finish: its step 1 claimed by `workerId` (through `db`'s
 * driver) and completed in the finish returned, with its job's ack.
 */
export async function readyToFinish(
  db: Database,
  runId: string,
  workerId: string,
  output: TopRunFinish['output'],
): Promise<TopRunFinish> {
  const claim = [stepClaim(workerId, runId, 1)];
  stepTransitionResults(claim, await db.driver.statement(stepTransitionsStatement(claim)));
  const row = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 1 } });
  const job = await db.prisma.job.findFirstOrThrow({ where: { run_id: runId } });
  const outcome: TransitionOutcome = {
    table: 'action_runs',
    id: row.id,
    attempts: 1,
    outcome: { kind: 'completed', output: { done: 1 } },
    event: { type: 'action.completed', sequence: 1, data: {} },
  };
  return {
    runId,
    status: 'Completed',
    output,
    data: {},
    now: new Date(),
    outcome,
    ack: { id: job.id, workerId },
  };
}

/** What went out, in order: each hot statement's kind and its round (null: sent alone). */
export const sentKinds = (sent: SentStatement[]) => sent.map((s) => [kindOfText(s.text), s.round ?? null]);

/** The hot statement kind a text is, by the comment it opens with. */
const kindOfText = (text: string) =>
  text.includes('sagaflow: step transitions')
    ? 'transitions'
    : text.includes('sagaflow: top-level run finishes')
      ? 'finishes'
      : text.includes('sagaflow: starts')
        ? 'starts'
        : text.includes('sagaflow: start with first step')
          ? 'starts with first step'
          : text.slice(0, 40);

/** A run's history as `type` or `type#sequence`, oldest first. */
export async function historyOf(db: Database, runId: string): Promise<string[]> {
  const events = await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
  return events.map((e) => (e.sequence === null ? e.type : `${e.type}#${e.sequence}`));
}

/**
 * Statements that go alone at once while nothing is out (ADR 0076: as many as the rounds may have out
 * while none is slow); the items submitted after them wait, and go together as one round.
 */
export const lonesBeforeRound = roundLimits.outWhileNoneSlow;

/** {@link lonesBeforeRound} active runs leased to `workerId`, named `<prefix>-lone-<k>`: their ids. */
export const activeLones = (db: Database, prefix: string, workerId: string) =>
  Promise.all(Array.from({ length: lonesBeforeRound }, (_, k) => activeRun(db, `${prefix}-lone-${k}`, workerId)));

/** The end of the event loop's current turn, when a batcher sends what waited while a statement was out (ADR 0083). */
export const turnEnd = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Each lone run's claim of step `sequence` by `workerId`, each submitted in a turn of its own so it goes
 * alone (ADR 0083: what arrives while a statement is out goes at the turn's end, with whatever else
 * arrived in that turn); resolves once all are out, before a round's items are submitted. A lone
 * claim's failure stays for the caller to see (it is not reported as unhandled meanwhile).
 */
export async function loneClaims(
  deps: FusableDeps,
  workerId: string,
  lones: string[],
  sequence = 1,
): Promise<Promise<TransitionResult>[]> {
  const claims: Promise<TransitionResult>[] = [];
  for (const lone of lones) {
    const claim = transitionInBatch(deps, stepClaim(workerId, lone, sequence));
    claim.catch(() => undefined);
    claims.push(claim);
    await turnEnd();
  }
  return claims;
}

/** {@link sentKinds}' rows of the lone statements that go before a round, each of `kind`. */
export const sentAlone = (kind = 'transitions') =>
  Array.from({ length: lonesBeforeRound }, (): [string, null] => [kind, null]);

/**
 * The lone statements' and then a round's items, submitted in that order (the caller builds `lones`
 * first): one result for every lone one (the first rejection, or all their values), then each round
 * item's.
 */
export async function settleAfterLones<T extends unknown[]>(
  lones: Promise<unknown>[],
  round: [...{ [K in keyof T]: Promise<T[K]> }],
): Promise<[PromiseSettledResult<unknown[]>, ...{ [K in keyof T]: PromiseSettledResult<T[K]> }]> {
  const [alone, inRound] = await Promise.all([
    Promise.allSettled(lones),
    Promise.allSettled(round as Promise<unknown>[]),
  ]);
  const failed = alone.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  const values = alone.map((r) => (r as PromiseFulfilledResult<unknown>).value);
  const first: PromiseSettledResult<unknown[]> = failed ?? { status: 'fulfilled', value: values };
  return [first, ...inRound] as [PromiseSettledResult<unknown[]>, ...{ [K in keyof T]: PromiseSettledResult<T[K]> }];
}
