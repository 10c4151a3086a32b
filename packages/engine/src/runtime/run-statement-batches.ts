import type { SqlDriver } from '../db/database.ts';
import type { RawResult, RawStatement } from '../db/raw-db.ts';
import type { FinalRunStatus } from '../store/finish-run.ts';
import { finishTopRunResults, finishTopRunsStatement, type TopRunFinish } from '../store/finish-top-runs.ts';
import {
  stepTransitionResults,
  stepTransitionsStatement,
  type StepTransition,
  type TransitionResult,
} from '../store/step-transitions.ts';
import { isNoConnectionInTime, sendRunStatement } from './in-run-transaction.ts';
import type { FusableDeps } from './replay/fused-outcome.ts';
import { StatementBatcher } from './statement-batcher.ts';

/**
 * Statements of each kind in flight at most per driver (ADR 0045). One goes while none is slow, which
 * batches best (the bench's closed loop at c = 8 and 32 did better with one than with two always
 * allowed, within a wide spread between runs on this machine); each statement out longer than
 * {@link slowStatementMs} lets one more go, so a batch held on a run's row lock does not hold up every
 * other run of the process. A statement of any kind (transitions, finishes, and starts since ADR 0063)
 * also lets a second go when enough runs wait behind it ({@link secondStatementFrom}, ADR 0059).
 */
export const statementsInFlight = 4;
/** How long a statement is out before another of its kind may go beside it. */
export const slowStatementMs = 25;
/** The most runs one statement carries. */
export const runsPerStatement = 64;
/**
 * A second transitions (or finishes) statement goes beside the one out, before it is slow, once at
 * least this many runs wait that it does not carry, and no fewer than it carries (ADR 0059): runs
 * enough to fill a statement as well as the one out go now instead of waiting for its return; fewer
 * wait, to ride in a fuller one. A lone run (c = 1) never meets it: nothing waits behind it.
 */
export const secondStatementFrom = 2;

/**
 * The limits every statement batcher of the hot path sends under: transitions, finishes and, since
 * ADR 0063, starts (`api/start-in-batch.ts`) too, so a start waits behind its kind's statement no
 * longer than a transition does.
 */
export const runStatementLimits = {
  maxInFlight: statementsInFlight,
  slowMs: slowStatementMs,
  maxBatch: runsPerStatement,
  secondFrom: secondStatementFrom,
} as const;

/**
 * The limits a driver's rounds send under (ADR 0076): two rounds out at once while none is slow, and
 * no third before one is. With every kind in one batcher (ADR 0066), one round out at a time kept the
 * server's share of the hot path on one backend at a time, so on two cores PostgreSQL's work could
 * never overlap; two out let it (+13 % flows/s at c = 8, durable, in five pairs out of five) and cost
 * about a fifth more WAL flushes per flow. Each slow round still lets one more go, up to
 * {@link statementsInFlight}; a run is never in two rounds at once.
 */
export const roundLimits = {
  maxInFlight: statementsInFlight,
  outWhileNoneSlow: 2,
  slowMs: slowStatementMs,
  maxBatch: runsPerStatement,
} as const;

/**
 * A kind of hot statement as a round carries it (ADR 0066): its set-based text for some items, what
 * each item wrote, and how its items go as a statement of their own, under the kind's own rules
 * (the wait for a connection, a stale plan's resend): a lone item, an item resent alone after a
 * refused round, and a kind's items when a round could not be sent at all.
 */
export interface RoundKind<T, R> {
  /** Its place in a round: statements go in this order (starts, then transitions, then finishes). */
  readonly order: number;
  readonly name: string;
  /**
   * Whether its items go again, as their own statement, after a round that got no connection in
   * time: a run statement's do (alone they wait again, for up to the lease); a start's do not (the
   * round waited the pool's own wait for it, all that a lone start waits: it gets that error, ADR 0070).
   */
  readonly resentUnsent: boolean;
  statement(items: T[]): RawStatement;
  results(items: T[], result: RawResult): R[];
  alone(items: T[], driver: SqlDriver, deps: FusableDeps | undefined): Promise<R[]>;
}

/** An item of a round: its kind, its key (a run id, or a start's business key, across kinds), and a run's deps. */
interface RoundItem {
  kind: RoundKind<unknown, unknown>;
  item: unknown;
  key: string;
  deps: FusableDeps | undefined;
}

/**
 * The errors of rounds that failed before anything was sent (no connection in time): the kinds that
 * go again then go as their own statements ({@link RoundKind.resentUnsent}), the others get the error
 * as it is, the pool's own words, as a lone item of theirs would.
 */
const unsentRounds = new WeakSet<object>();

/**
 * The items of one round, sent (ADR 0066). Of one kind (a lone item, every round at c = 1, and each
 * item resent alone after a refused round): that kind's own statement, exactly as its batcher sent
 * it before rounds. Of several: each kind's set-based statement, in kind order, as ONE transaction
 * in one round trip (`driver.statements`), waiting for a connection as a run statement does
 * (`worker.transaction_wait_ms`), or only the pool's own wait when a start is in it (a start holds
 * no lease and must not outwait its caller, ADR 0043); without a connection in time, nothing was
 * sent: the transitions and finishes go as their own statements under their own rules, and a start
 * gets the pool's error, having waited as long as alone (ADR 0070).
 */
function sendRound(driver: SqlDriver, items: RoundItem[]): Promise<unknown[]> {
  const first = items[0]!;
  // A lone item (every statement at c = 1) goes as its kind's own statement, with nothing built for a
  // round, and no async frame of its own around it (ADR 0097).
  if (items.length === 1) return first.kind.alone([first.item], driver, first.deps);
  return sendSeveral(driver, items);
}

/** {@link sendRound} of two items or more. */
async function sendSeveral(driver: SqlDriver, items: RoundItem[]): Promise<unknown[]> {
  const first = items[0]!;
  const byKind = new Map<RoundKind<unknown, unknown>, RoundItem[]>();
  for (const item of items) {
    const same = byKind.get(item.kind);
    if (same === undefined) byKind.set(item.kind, [item]);
    else same.push(item);
  }
  if (byKind.size === 1)
    return first.kind.alone(
      items.map((i) => i.item),
      driver,
      first.deps,
    );
  const kinds = [...byKind.keys()].sort((a, b) => a.order - b.order);
  const parts = kinds.map((kind) => byKind.get(kind)!);
  const runDeps = items.find((i) => i.deps !== undefined)?.deps;
  const waitMs = items.some((i) => i.deps === undefined) ? undefined : runDeps?.config.worker.transaction_wait_ms;
  let answers: RawResult[];
  try {
    answers = await driver.statements!(
      parts.map((part, k) => kinds[k]!.statement(part.map((i) => i.item))),
      waitMs === undefined ? undefined : { waitMs },
    );
  } catch (err) {
    if (isNoConnectionInTime(err) && typeof err === 'object' && err !== null) unsentRounds.add(err);
    throw err;
  }
  const results = new Map<RoundItem, unknown>();
  parts.forEach((part, k) => {
    const written = kinds[k]!.results(
      part.map((i) => i.item),
      answers[k]!,
    );
    part.forEach((item, n) => results.set(item, written[n]));
  });
  return items.map((item) => results.get(item));
}

const roundsByDriver = new WeakMap<SqlDriver, StatementBatcher<RoundItem, unknown>>();

/**
 * One batcher per driver for every kind of hot statement (ADR 0066): the kinds wait behind one round
 * out instead of one statement per kind; a round carries each kind's items up to `maxBatch`, never
 * two items of one key (a run is never in two statements at once, whatever their kinds), and is
 * refused, resent item by item and lost as one statement was (ADR 0045).
 */
function roundsOf(driver: SqlDriver): StatementBatcher<RoundItem, unknown> {
  let rounds = roundsByDriver.get(driver);
  if (rounds === undefined) {
    rounds = new StatementBatcher<RoundItem, unknown>({
      send: (items) => sendRound(driver, items),
      key: (item) => item.key,
      kindOf: (item) => item.kind.name,
      notSent: (err, kindItems) =>
        typeof err === 'object' && err !== null && unsentRounds.has(err) && kindItems[0]!.kind.resentUnsent,
      ...roundLimits,
    });
    roundsByDriver.set(driver, rounds);
  }
  return rounds;
}

/**
 * Whether a driver's hot statements go in rounds (ADR 0066): where it sends several statements as
 * one transaction in one round trip (PostgreSQL). Elsewhere (PGlite) each kind keeps its batcher.
 */
export function sendsRounds(driver: SqlDriver): boolean {
  return driver.statements !== undefined;
}

/** An item in the driver's next round; see {@link roundsOf}. */
export function submitToRound<T, R>(
  driver: SqlDriver,
  kind: RoundKind<T, R>,
  item: T,
  key: string,
  deps?: FusableDeps,
): Promise<R> {
  return roundsOf(driver).submit({
    kind,
    item,
    key,
    deps,
  }) as Promise<R>;
}

/** The run's deps a transition or a finish goes with (set on every such item). */
const runDepsOf = (deps: FusableDeps | undefined): FusableDeps => {
  if (deps === undefined) throw new Error('a run statement was submitted without its run deps: an engine bug');
  return deps;
};

const transitionKind: RoundKind<StepTransition, TransitionResult> = {
  order: 2,
  name: 'transitions',
  resentUnsent: true,
  statement: (items) => stepTransitionsStatement(items),
  results: (items, result) => stepTransitionResults(items, result),
  alone: async (items, _driver, deps) =>
    stepTransitionResults(items, await sendRunStatement(runDepsOf(deps), stepTransitionsStatement(items))),
};

const finishKind: RoundKind<TopRunFinish, FinalRunStatus | null> = {
  order: 3,
  name: 'finishes',
  resentUnsent: true,
  statement: (items) => finishTopRunsStatement(items),
  results: (_items, result) => finishTopRunResults(result),
  alone: async (items, _driver, deps) =>
    finishTopRunResults(await sendRunStatement(runDepsOf(deps), finishTopRunsStatement(items))),
};

interface Batchers {
  transitions: StatementBatcher<StepTransition, TransitionResult>;
  finishes: StatementBatcher<TopRunFinish, FinalRunStatus | null>;
}

const byDriver = new WeakMap<SqlDriver, Batchers>();

function batchersOf(deps: FusableDeps): Batchers {
  let batchers = byDriver.get(deps.driver);
  if (!batchers) {
    batchers = {
      transitions: new StatementBatcher({
        send: (items) => transitionKind.alone(items, deps.driver, deps),
        key: (item) => item.step.runId,
        ...runStatementLimits,
      }),
      finishes: new StatementBatcher({
        send: (items) => finishKind.alone(items, deps.driver, deps),
        key: (item) => item.runId,
        ...runStatementLimits,
      }),
    };
    byDriver.set(deps.driver, batchers);
  }
  return batchers;
}

/**
 * A new step's transition (ADR 0042) in one statement with the transitions of the other runs this
 * process has waiting at that moment (ADR 0045), and, where the driver sends rounds, in one
 * transaction with the other kinds' statements waiting then (ADR 0066). The statement waits for a
 * pooled connection as a run transaction does (`worker.transaction_wait_ms`, then again while none
 * comes, for up to the lease).
 */
export function transitionInBatch(deps: FusableDeps, item: StepTransition): Promise<TransitionResult> {
  if (sendsRounds(deps.driver))
    return submitToRound(deps.driver, transitionKind, item, `run\n${item.step.runId}`, deps);
  return batchersOf(deps).transitions.submit(item);
}

/** A top-level run's finish (ADR 0042), batched likewise with other runs' finishes: the status written, or null. */
export function finishInBatch(deps: FusableDeps, item: TopRunFinish): Promise<FinalRunStatus | null> {
  if (sendsRounds(deps.driver)) return submitToRound(deps.driver, finishKind, item, `run\n${item.runId}`, deps);
  return batchersOf(deps).finishes.submit(item);
}
