/**
 * What one worker pool did since it started, counted (never timed): how often it asked the job
 * table for work and what came back, how often a start was handed to it or refused, and what woke
 * it. The pool only adds to them; the bench reads them per flow, and a test asserts on them (ADR
 * 0038, addendum of 2026-12-01).
 */
export interface WorkerPoolCounters {
  /** Claim statements sent. */
  claims: number;
  /** Claims that leased no job. */
  emptyClaims: number;
  /** Jobs leased by those claims. */
  jobsClaimed: number;
  /** Claimed jobs that did not fit and went back to the queue. */
  jobsGivenBack: number;
  /**
   * Reads of the queue (no lease) when a claim was owed but every slot was taken, counted once
   * answered (ADR 0061): each one that found nothing due lets starts keep skipping the queue (ADR 0060).
   */
  looks: number;
  /** Those reads that found a due job: starts are refused (`queued`) until the loop has claimed. */
  looksFindingWork: number;
  /** Starts in this process whose run the pool took at once (`reserve()` kept a slot). */
  handOffs: number;
  /** Starts `reserve()` refused, by why. */
  handOffsRefused: {
    /** The pool was stopping. */
    stopped: number;
    /** Every slot was taken. */
    full: number;
    /** A wake was waiting for the loop (queued work goes first). */
    queued: number;
    /** The loop had not read the job table (a claim or a look) for two poll intervals. */
    stale: number;
  };
  /**
   * NOTIFYs the pool's listener heard: `own` are those of jobs this pool's process queued (or gave
   * back) and had already woken the loop for; `others` the rest, and each time a LISTEN took hold.
   */
  notifications: { own: number; others: number };
  /** Times the loop woke because its poll interval ran out rather than for a wake. */
  polls: number;
  /**
   * Not a counter: the slots taken when the copy was made (reserved by starts, and runs in flight
   * whose finish has not committed). A start is handed over only while it is below the concurrency.
   */
  slotsTaken: number;
}

export function newPoolCounters(): WorkerPoolCounters {
  return {
    claims: 0,
    emptyClaims: 0,
    jobsClaimed: 0,
    jobsGivenBack: 0,
    looks: 0,
    looksFindingWork: 0,
    handOffs: 0,
    handOffsRefused: { stopped: 0, full: 0, queued: 0, stale: 0 },
    notifications: { own: 0, others: 0 },
    polls: 0,
    slotsTaken: 0,
  };
}

/** A copy the reader may keep: the pool goes on adding to its own. */
export function copyPoolCounters(c: WorkerPoolCounters): WorkerPoolCounters {
  return { ...c, handOffsRefused: { ...c.handOffsRefused }, notifications: { ...c.notifications } };
}
