import type { Prisma } from '../generated/prisma/client.ts';
import { databaseSaid } from '../errors/engine-error.ts';
import { isLockWaitGivenUp } from '../process/process-deps.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { lockOpenRun } from '../store/lock-open-run.ts';
import { inSweepTransaction } from './in-sweep-transaction.ts';

/** What a sweep still waits for one held run's row once it spent its allowance (`sweeps.held_run_wait_ms`). */
export const monitorRunWaitFloorMs = 100;

/**
 * One sweep's allowance for waiting on the rows of runs other sessions hold (ADR 0135). A worker's round
 * holds a run's row for a moment (a replay's load, a claim, a job's claim), longer on a loaded machine:
 * the sweep waits for it rather than pass the run over and leave its deadline or its `owner_gone` to the
 * next pass. A row held for good (an operator's psql, a host's open transaction) must not stop the sweep:
 * the sweep spends `sweeps.held_run_wait_ms` in all, then {@link monitorRunWaitFloorMs} per run, as a bulk
 * repair does (ADR 0132).
 */
export class HeldRunWaits {
  private spentMs = 0;
  constructor(
    private readonly totalMs: number,
    private readonly floorMs = monitorRunWaitFloorMs,
  ) {}
  /** A sweep's allowance, as the engine's settings give it (`sweeps.held_run_wait_ms`). */
  static of(deps: RuntimeDeps): HeldRunWaits {
    return new HeldRunWaits(deps.config.sweeps.held_run_wait_ms);
  }
  /** How long the next run's row may be waited for. */
  next(): number {
    return Math.round(Math.max(this.floorMs, this.totalMs - this.spentMs));
  }
  spend(ms: number): void {
    this.spentMs += ms;
  }
}

/** How long a run stays held across the monitor's sweeps before it is journaled `run_held` (ADR 0137). */
export const heldRunJournalAfterMs = 60_000;

/** How often a run still held is journaled again, at most. */
export const heldRunJournalEveryMs = 600_000;

/**
 * How long after its newest `run_held` entry a run still open counts as held where on-call looks (the
 * control plane's stuck lists, counts and `/metrics`, ADR 0138): the journal's cadence, and five minutes
 * for the sweeps that sight it to come round. A run let go drops out at the latest this long after.
 */
export const heldRunShownForMs = heldRunJournalEveryMs + 300_000;

/** Runs the sweeps of an engine last found held, and since when; past this many the oldest are forgotten. */
const heldRunsKept = 10_000;
type HeldRuns = Map<string, { since: number; lastSeen: number }>;
const heldSince = new WeakMap<RuntimeDeps, HeldRuns>();
/** When each run was last journaled `run_held`, by whichever sweep: one entry per run per window. */
const journaledAt = new WeakMap<RuntimeDeps, Map<string, number>>();

/**
 * Runs the sweeps found held, and runs they took (ADR 0137). A run held across the monitor's sweeps for
 * {@link heldRunJournalAfterMs} (longer than any of the engine's own transactions may hold a run) cannot
 * carry a stuck reason, since its row cannot be written: the monitor says so where on-call looks, a
 * `run_held` anomaly on the run naming the sweep that could not do its work and what to do, and a warn
 * log; again every {@link heldRunJournalEveryMs} while it stays held. Held "across sweeps" means found held
 * at each sighting with no more than {@link heldRunJournalAfterMs} between two of them: a run held for a
 * moment now and for a moment minutes later is two moments (review 64). A run a sweep took, or found
 * closed, is forgotten by that sweep; each sweep counts for itself, and a run is journaled once per
 * window whichever sweeps found it held. Kept in the engine's memory: a replica that takes the monitor's lease over starts
 * counting. The run-by-run sweeps note through {@link onMonitoredRun}; the set-based ones (the step
 * expiry, the doctor's R1–R3, which skip a held run) note what they skipped and what they took.
 */
export async function noteHeldRuns(
  deps: RuntimeDeps,
  what: string,
  runs: { held: Iterable<string>; taken: Iterable<string> },
  waitedMs = 0,
): Promise<void> {
  const known = heldSince.get(deps);
  if (known) for (const runId of runs.taken) known.delete(heldKey(what, runId));
  for (const runId of runs.held) await noteHeldRun(deps, what, runId, waitedMs);
}

/**
 * Each sweep counts for itself: a sweep that takes the run (the doctor locks the run's row alone) must not
 * forget what another found held (the expiry waits on its child's row too): review 65.
 */
function heldKey(what: string, runId: string): string {
  return `${what} ${runId}`;
}

async function noteHeldRun(deps: RuntimeDeps, what: string, runId: string, waitedMs: number) {
  let runs = heldSince.get(deps);
  if (!runs) heldSince.set(deps, (runs = new Map() as HeldRuns));
  const now = deps.clock.now().getTime();
  const key = heldKey(what, runId);
  let seen = runs.get(key);
  // A sighting long after the last one starts a new episode: the run was let go in between, unseen.
  if (!seen || now - seen.lastSeen > heldRunJournalAfterMs) seen = { since: now, lastSeen: now };
  seen.lastSeen = now;
  runs.delete(key);
  runs.set(key, seen);
  while (runs.size > heldRunsKept) runs.delete(runs.keys().next().value!);
  const heldMs = now - seen.since;
  if (heldMs < heldRunJournalAfterMs) return;
  let journaled = journaledAt.get(deps);
  if (!journaled) journaledAt.set(deps, (journaled = new Map<string, number>()));
  const last = journaled.get(runId);
  if (last !== undefined && now - last < heldRunJournalEveryMs) return;
  journaled.delete(runId);
  journaled.set(runId, now);
  while (journaled.size > heldRunsKept) journaled.delete(journaled.keys().next().value!);
  const heldSeconds = Math.round(heldMs / 1000);
  const message =
    `the monitor's ${what} could not take run ${runId}: another session has held its row, or a row of it ` +
    `(a step, a child), at each sweep for ${heldSeconds} s; nothing was written and the run is passed over ` +
    'until it is let go. Find the session holding it (an open transaction: pg_stat_activity, state ' +
    "'idle in transaction') and end it";
  deps.logger.warn({ runId, heldSeconds, what }, message);
  // The row's version as it stands (a plain read waits for no lock): once anything writes the row, the
  // control plane stops showing the run held (ADR 0138).
  const [row] = await deps.prisma.$queryRaw<{ xmin: string }[]>`
    select xmin::text as xmin from "sagaflow"."flow_runs" where id = ${runId}::uuid`;
  await deps.journal({
    code: 'run_held',
    runId,
    site: 'monitor.run',
    message,
    details: {
      sweep: what,
      held_seconds: heldSeconds,
      since: new Date(seen.since).toISOString(),
      waited_ms: waitedMs,
      row_xmin: row?.xmin ?? null,
    },
  });
}

/** A run's transaction of a monitor sweep failed for a reason other than a held row (ADR 0135's addendum). */
export class RunSweepFailed {
  constructor(
    readonly error: unknown,
    /** What the database said, in one line, for a log, a journal entry and a stuck reason. */
    readonly message: string,
  ) {}
}

/**
 * One run's transaction of a monitor sweep (expiry, `owner_gone`, a stuck reason's change, the doctor's
 * reclaim). Every row it locks (the run's, a step's, a child's) is waited for at most what `waits` allows:
 * the sweep's allowance while it lasts (a worker's round lets go in a moment), then 100 ms. A run still
 * held past that is `held`: nothing is written, the whole transaction's time is spent from the allowance,
 * it is logged, and the sweep goes on to its next run, whose deadline or stuck reason must not wait behind
 * this one (review 58: one held overdue run kept every replica's monitor from expiring anything or judging
 * any step `owner_gone`; review 62: a held step or child cost 1 s outside the allowance). The next pass
 * looks at it again. `closed`: the run is not open any more. Any other failure (the statement or the
 * transaction outlasting `sweeps.transaction_timeout_ms`, a deadlock) is logged at warn and answered as
 * {@link RunSweepFailed}: one run the sweep cannot finish must not fail the sweep (review 62), and the
 * caller says so where an operator looks (the expiry holds it off and journals `expiry_failed`).
 */
export async function onMonitoredRun<T>(
  deps: RuntimeDeps,
  what: string,
  runId: string,
  strength: 'key share' | 'no key update' | 'update',
  work: (tx: Prisma.TransactionClient) => Promise<T>,
  waits: HeldRunWaits = HeldRunWaits.of(deps),
): Promise<T | 'held' | 'closed' | RunSweepFailed> {
  // Well below the transaction's own limit (a quarter: the rest is for its statements on a loaded machine),
  // so that a wait for a held row ends as a given-up lock wait (held), never as the statement's or the
  // transaction's time limit (a failure), whatever the two settings are (review 63).
  const limitMs = deps.config.sweeps.transaction_timeout_ms;
  const waitMs = Math.min(waits.next(), Math.floor(limitMs / 4));
  const started = performance.now();
  let lockedAt: number | null = null;
  const outcome = await inSweepTransaction(
    deps.prisma,
    limitMs,
    async (tx): Promise<T | 'closed'> => {
      const open = await lockOpenRun(tx, runId, strength);
      lockedAt = performance.now();
      return open ? work(tx) : 'closed';
    },
    { lock_timeout: String(waitMs) },
  ).catch((err: unknown): 'held' | RunSweepFailed => {
    if (isLockWaitGivenUp(err)) return 'held';
    return new RunSweepFailed(err, databaseSaid(err).slice(0, 500));
  });
  const tookMs = Math.round(performance.now() - started);
  // A held run costs the allowance all the time it took; a run that was not, the wait for its row.
  waits.spend(outcome === 'held' || lockedAt === null ? tookMs : lockedAt - started);
  await noteHeldRuns(
    deps,
    what,
    outcome === 'held' ? { held: [runId], taken: [] } : { held: [], taken: [runId] },
    waitMs,
  );
  if (outcome === 'held')
    deps.logger.info(
      { runId, waitedMs: waitMs, tookMs },
      `${what}: run ${runId} or a row of it is held by another session (an open transaction on its rows); passed over until the next pass`,
    );
  else if (outcome instanceof RunSweepFailed)
    deps.logger.warn(
      { runId, err: outcome.error, tookMs },
      `${what}: run ${runId} could not be done: ${outcome.message}; the next pass tries again`,
    );
  return outcome;
}
