import { setTimeout as sleep } from 'node:timers/promises';
import { withStoreRetry, type StoreRetryPolicy } from '../process/store-retry.ts';
import { executeRun } from '../runtime/execute-run.ts';
import { SimulatedCrash, type RuntimeDeps } from '../runtime/runtime-deps.ts';
import { claimJobs, type DbJob } from '../store/claim-jobs.ts';
import { beatWorker } from '../store/beat-worker.ts';
import { deleteJob, type JobAck } from '../store/delete-job.ts';
import { findDueJob } from '../store/find-due-job.ts';
import { releaseJobs } from '../store/release-jobs.ts';
import { stopWorker } from '../store/stop-worker.ts';
import { autocommitDb } from '../db/autocommit-db.ts';
import { closedByHostError } from '../db/closed-by-host.ts';
import type { Database } from '../db/database.ts';
import { listenForJobs } from './listen-for-jobs.ts';
import { napUntilWoken } from './nap-until-woken.ts';
import { trackOwnNotifications } from './own-notifications.ts';
import { copyPoolCounters, newPoolCounters, type WorkerPoolCounters } from './pool-counters.ts';
import { startLoop } from './start-loop.ts';

export interface WorkerPool {
  /** The worker id this pool claims, leases and beats under, for its whole life (ADR 0010's second addendum). */
  readonly workerId: string;
  /** Stops claiming, waits up to `drainMs` for in-flight jobs, and resolves. Unfinished jobs keep their lease and are redelivered after it. */
  /**
   * `lastPool`, asked once the drain is done: whether no other pool of the engine runs now. Only then
   * are the engine's held outcomes given up (a pool started during the drain keeps retrying them).
   */
  stop(drainMs?: number, lastPool?: () => boolean): Promise<{ drained: boolean }>;
  /** Wakes the poll loop now. */
  nudge(): void;
  /**
   * Keeps a slot for a run this process is about to start, if one is free: the start then leases
   * the run's first wake to this worker and hands it over with {@link adopt}, with no poll between.
   */
  reserve(): boolean;
  /** Runs a job a start leased to this worker in the slot it reserved; null gives the slot back. */
  adopt(job: DbJob | null): void;
  /**
   * Before a start that got no slot queues its wake due now (and nudges this pool after it): the
   * NOTIFY that wake sends is this pool's own and must not wake it a second time. Call the result
   * with whether the start committed.
   */
  expectOwnNotification(): (committed: boolean) => void;
  /** What the pool did so far (a copy): for the bench and for tests, never for its own decisions. */
  counters(): WorkerPoolCounters;
}

/**
 * A replay that lost a deadlock or a serialization conflict (or a connection) is run again at once,
 * a few times, instead of waiting out its job's lease: a replay is safe to repeat, and the lease is
 * measured on the business clock, which may stand still.
 */
const transientReplayRetry: StoreRetryPolicy = { maxAttempts: 3, baseDelayMs: 25, maxDelayMs: 200 };

/**
 * Claims due jobs (all its free slots in one statement) when a NOTIFY or this process says one was
 * queued, when a slot frees while the queue may hold more, and at every poll, and runs up to
 * `concurrency` jobs at once (a run whose finish has committed no longer counts). A job is deleted
 * only after its handler returned, or by the transaction that finished its run; one whose handler
 * threw (a database outage, say) keeps its lease and comes back when the lease runs out:
 * at-least-once.
 */
export function startWorkerPool(deps: RuntimeDeps, opts: { listen?: Database['listen'] } = {}): WorkerPool {
  const { concurrency, poll_interval_ms: pollMs, lease_seconds: leaseSeconds, notify } = deps.config.worker;
  // This pool's worker id, for its whole life: a pool started after it (the engine's workers started
  // again while this one drains) has an id of its own, and this one's stop must record its own.
  const { workerId } = deps;
  const inFlight = new Set<Promise<void>>();
  let running = true;
  let wake: (() => void) | null = null;
  let nudged = false;
  /** Nudges so far: a look at the queue clears `nudged` only if none came while it was in flight. */
  let nudges = 0;
  /** `nudges` when the loop last looked at the queue: a nudge already looked for needs no second look. */
  let lookedAtNudge = -1;
  /** Slots kept by starts that have not handed their job over yet. */
  let reserved = 0;
  /** When the loop last asked the job table for work, by a claim or a look (monotonic ms). */
  let lastClaimAt = performance.now();
  /**
   * A LISTEN took hold: whatever was queued while nobody listened announced itself to no one, so the
   * loop owes the job table a claim (or, full, a look) begun after it. Unlike a nudge it refuses no
   * start: it says work may wait, not that it does, as a job that comes due by time does (ADR 0064).
   */
  let owed = false;
  const nudge = () => {
    nudged = true;
    nudges += 1;
    wake?.();
  };
  // The pool's own statements (claim, acknowledgement, release, heartbeat) go through the driver,
  // prepared by name, not through Prisma's runtime (ADR 0043).
  const db = autocommitDb(deps);
  const counters = newPoolCounters();
  // A notification slower than two poll intervals is most likely lost; the poll has covered it by then.
  const own = trackOwnNotifications(2 * pollMs);
  // Our own job's NOTIFY only repeats the nudge this process gave after queuing it; taken as a wake it
  // would refuse hand-offs until the next claim, for a job the loop has most likely claimed already.
  const onNotification = () => {
    if (own.take()) {
      counters.notifications.own += 1;
      return;
    }
    counters.notifications.others += 1;
    nudge();
  };

  const handle = async (job: DbJob, ack: JobAck) => {
    try {
      const runId = job.run_id;
      // A run that finishes acknowledges its job in its finishing transaction (ADR 0029).
      if (job.kind === 'wake-run' && runId) {
        // The run as the claim marked it active, for the first try only: a retry loads it (ADR 0100).
        let claimed = job.loaded;
        await withStoreRetry(transientReplayRetry, () => {
          const loaded = claimed;
          claimed = undefined;
          return executeRun(deps, runId, ack, loaded);
        });
      }
      if (!ack.done) await deleteJob(db, ack);
    } catch (err) {
      if (err instanceof SimulatedCrash) return;
      // The host closed the database under a job stopWorkers did not drain (it answered drained: false):
      // expected at such a shutdown, and what the job held is logged where it was let go (ADR 0129).
      if (closedByHostError(err, deps.driver)) {
        deps.logger.info(
          { err, jobId: String(job.id), runId: job.run_id },
          'job stopped: the database was closed by its host; it is redelivered after its lease',
        );
        return;
      }
      deps.logger.error(
        { err, jobId: String(job.id), runId: job.run_id },
        'job failed; it will be redelivered after its lease',
      );
    }
  };
  /** The jobs in flight, by their acknowledgement. */
  const holding = new Set<JobAck>();
  /**
   * Slots taken: reserved ones, and jobs in flight whose run has not committed its finish. A run
   * whose finishing transaction committed (and acknowledged its job) holds its slot no longer while
   * its `run.finished` listeners run: a start from one of them is handed to this pool at once, and a
   * listener that waits for the run it started cannot starve a full pool (ADR 0029).
   */
  const busy = () => {
    let n = reserved;
    for (const ack of holding) if (!ack.done) n += 1;
    return n;
  };
  const run = (job: DbJob) => {
    const ack: JobAck = { id: job.id, workerId, done: false };
    holding.add(ack);
    const p: Promise<void> = handle(job, ack).finally(() => {
      inFlight.delete(p);
      holding.delete(ack);
      wake?.();
    });
    inFlight.add(p);
  };

  /**
   * Returns jobs this worker leased but will not run to the queue, due now, and wakes the loop for
   * them (queued work goes first); if that fails, their leases still run out.
   */
  const giveBack = (jobs: readonly DbJob[]) => {
    if (jobs.length === 0) return;
    counters.jobsGivenBack += jobs.length;
    const ids = jobs.map((j) => j.id);
    const settle = listener ? own.expect() : null;
    void releaseJobs(db, { ids, workerId }).then(
      (notified) => {
        settle?.(notified);
        if (notified) nudge();
      },
      (err: unknown) => {
        settle?.(false);
        deps.logger.warn(
          { err, jobIds: ids.map(String) },
          'could not give jobs back to the queue; they wait out their lease',
        );
      },
    );
  };

  // A job due now that another process queued (a start, a signal, a kick, a repair, a re-dispatch)
  // wakes the loop at once through a NOTIFY; the poll stays, and finds what comes due later (ADR 0038).
  const listener =
    notify && opts.listen
      ? listenForJobs(opts.listen, {
          logger: deps.logger,
          onJob: onNotification,
          onListening: () => {
            own.forget();
            counters.notifications.others += 1;
            owed = true;
            wake?.();
          },
        })
      : null;

  // The heartbeat (ADR 0010): while it beats, the steps this worker holds are its own; once it
  // stops (or the pool stops), a step it holds with no reclaim deadline can be reclaimed.
  const heartbeat = startLoop({
    intervalMs: deps.config.worker.heartbeat_interval_ms,
    pass: () => beatWorker(db, { workerId }),
    onError: (err) => deps.logger.warn({ err }, 'worker heartbeat failed; it will try again'),
  });

  /**
   * Whether the queue may hold a due job this pool was not told of: the last claim filled every slot
   * it asked for (more may wait), or it failed. After a claim that came back short, each job queued
   * due now announces itself while the listener holds (another process's NOTIFY, this process's
   * nudge), so a slot that frees needs no claim of its own; what comes due by time or by a lease
   * running out announces nothing, and the loop still claims for it once per poll interval.
   */
  let mayHoldMore = true;

  /**
   * A claim is owed, or a nudge waits, but every slot is taken (a closed loop of starts handed to
   * this pool keeps it so): read whether the queue holds a due job instead. Nothing due: the table
   * was looked at and the nudge is answered (unless another came meanwhile), so starts keep skipping
   * the queue. Something due: starts are refused until a slot frees and the loop claims it (queued
   * work goes first). Before this, a pool kept full past two poll intervals refused the next start
   * so as to claim, and a nudge that came while a claim was in flight (the start's own, for the job
   * that claim took) refused the next one: each such start paid three more writing transactions,
   * for a queue that was empty (ADR 0060).
   */
  const lookAtQueue = async () => {
    const at = performance.now();
    const seen = nudges;
    lookedAtNudge = seen;
    owed = false;
    try {
      const due = await findDueJob(db, { now: deps.clock.now() });
      // Counted once answered: a read that failed read nothing (the warning below says so).
      counters.looks += 1;
      lastClaimAt = at;
      if (due) {
        counters.looksFindingWork += 1;
        nudged = true;
      } else {
        mayHoldMore = false;
        if (nudges === seen) nudged = false;
      }
    } catch (err) {
      deps.logger.warn({ err }, 'reading the job queue failed; starts go through it until a claim succeeds');
    }
  };

  const loop = async () => {
    while (running) {
      // Outcomes held through a database outage go out before new work is claimed.
      if (deps.heldOutcomes.size > 0) await deps.heldOutcomes.retry();
      const free = concurrency - busy();
      const wouldBeTold = listener?.listening() === true && !mayHoldMore && !nudged;
      const skip = free > 0 && wouldBeTold && !owed && performance.now() - lastClaimAt < pollMs;
      let jobs: DbJob[] = [];
      if (free > 0 && !skip) {
        nudged = false;
        owed = false;
        lastClaimAt = performance.now();
        mayHoldMore = true;
        try {
          counters.claims += 1;
          jobs = await claimJobs(db, {
            workerId,
            limit: free,
            leaseSeconds,
            now: deps.clock.now(),
            flows: deps.registry.flowNames,
            versions: deps.registry.flowVersions,
          });
          counters.jobsClaimed += jobs.length;
          if (jobs.length === 0) counters.emptyClaims += 1;
          mayHoldMore = jobs.length >= free;
        } catch (err) {
          deps.logger.warn({ err }, 'claiming jobs failed; retrying after the poll interval');
        }
      } else if (
        free <= 0 &&
        ((nudged && nudges !== lookedAtNudge) || owed || performance.now() - lastClaimAt >= pollMs)
      )
        await lookAtQueue();
      // A start may have reserved a slot while the claim was in flight: run what fits, give the rest back.
      const room = Math.max(0, concurrency - busy());
      for (const job of jobs.slice(0, room)) run(job);
      giveBack(jobs.slice(room));
      if (jobs.length === 0 || busy() >= concurrency) {
        // A look owed is sent now even with every slot taken: a LISTEN that took hold while this claim
        // was out woke no nap, and the claim may have filled the pool (the next pass looks, ADR 0069).
        if (owed || (nudged && busy() < concurrency)) continue;
        // A stop that came while the claim was in flight found no sleep to end: do not start one.
        if (!running) break;
        // A claim skipped now is owed one poll interval after the last one.
        const napMs = skip ? lastClaimAt + pollMs - performance.now() : pollMs;
        const woke = await napUntilWoken(napMs, (w) => (wake = w));
        wake = null;
        if (woke === 'poll') counters.polls += 1;
      }
    }
  };
  const looping = loop();

  const refuse = (why: keyof WorkerPoolCounters['handOffsRefused']) => {
    counters.handOffsRefused[why] += 1;
    return false;
  };

  return {
    workerId,
    nudge,
    reserve: () => {
      if (!running) return refuse('stopped');
      if (busy() >= concurrency) return refuse('full');
      // Queued work goes first (claims are oldest first): no hand-off while a wake is waiting for the
      // loop (a nudge), nor once the loop has not looked at the job table for two poll intervals (a pool
      // kept full by starts from run.finished listeners would otherwise never claim a timer's wake).
      if (nudged) return refuse('queued');
      if (performance.now() - lastClaimAt > 2 * pollMs) return refuse('stale');
      reserved += 1;
      counters.handOffs += 1;
      return true;
    },
    adopt: (job) => {
      reserved -= 1;
      if (job && running) return run(job);
      // A pool stopped meanwhile gives the job back to the queue now rather than let it wait out a
      // lease on a worker that will not run it (if this fails, the lease still runs out).
      if (job) giveBack([job]);
      wake?.();
    },
    expectOwnNotification: () => (listener ? own.expect() : () => undefined),
    counters: () => ({ ...copyPoolCounters(counters), slotsTaken: busy() }),
    stop: async (drainMs = 10_000, lastPool = () => true) => {
      running = false;
      wake?.();
      await listener?.stop();
      await looping;
      // The bound's timer goes once the drain is done: left running, it held the host's process for the
      // rest of it after a clean stop (a-host-exits-once-its-engine-is-stopped.pg.test.ts).
      const bound = new AbortController();
      const drained = await Promise.race([
        Promise.all(inFlight).then(() => true),
        sleep(drainMs, false, { signal: bound.signal }).catch(() => false),
      ]);
      bound.abort();
      await heartbeat.stop();
      // The held outcomes are the engine's: a pool started while this one drained (with its own worker
      // id) holds and retries them now, so they are given up only by the engine's last pool (review 57).
      if (lastPool()) await deps.heldOutcomes.release();
      // Drained: nothing is held any more. Not drained: the beats stop, and the steps still in flight
      // count as this worker's until worker.dead_after_seconds has passed without one.
      if (drained)
        await stopWorker(db, { workerId }).catch((err: unknown) =>
          deps.logger.warn({ err }, 'could not record that this worker stopped'),
        );
      return { drained };
    },
  };
}
