import type { Logger } from 'pino';

/** One approved bulk being applied by this engine, and how far it got. */
export interface BulkInFlight {
  approvalId: string;
  bulkId: string;
  /** Its items, all told. */
  of: number;
  /** Items tried so far (each applied, or decided otherwise: conflict, refused, not found, failed). */
  done: number;
  applied: number;
}

/**
 * The approved bulks one engine is applying now (an approver's or a resumer's pass), so that a
 * graceful stop can end them between two items instead of cutting them anywhere (ADR 0121). Once
 * `closed`, no bulk is claimed or resumed; once `stopping`, a bulk in flight ends after the item in
 * hand.
 */
export interface BulkAppliers {
  readonly closed: boolean;
  readonly stopping: boolean;
  /** Runs `apply` as a bulk in flight; `keepGoing` turns false when the stop ends it. */
  track<T>(bulk: BulkInFlight, apply: () => Promise<T>): Promise<T>;
  /**
   * Refuses new bulks at once, lets those in flight go on for up to `graceMs`, then ends each after
   * the item in hand, waiting up to `waitMs` more for that. A bulk whose item in hand outlives the
   * wait is logged at warn here (approval, items done of all); one that ended between two items is
   * logged by its applier.
   */
  stop(options: { graceMs: number; waitMs: number }): Promise<void>;
}

export function createBulkAppliers(logger: Logger): BulkAppliers {
  let closed = false;
  let stopping = false;
  const running = new Map<BulkInFlight, Promise<unknown>>();
  const allEnded = () => Promise.allSettled([...running.values()]);
  return {
    get closed() {
      return closed;
    },
    get stopping() {
      return stopping;
    },
    async track(bulk, apply) {
      const p = apply();
      running.set(bulk, p);
      try {
        return await p;
      } finally {
        running.delete(bulk);
      }
    },
    async stop({ graceMs, waitMs }) {
      closed = true;
      // With no grace, the bulks in flight are told at once (before this call returns its promise).
      if (running.size > 0 && (graceMs <= 0 || !(await within(allEnded(), graceMs)))) {
        stopping = true;
        if (!(await within(allEnded(), waitMs)))
          for (const b of running.keys())
            logger.warn(
              { approval: b.approvalId, bulkId: b.bulkId, done: b.done, applied: b.applied, of: b.of },
              `stopping: approved bulk ${b.approvalId} left part-applied, ${b.done} of ${b.of} items done ` +
                `(${b.applied} applied), item ${b.done + 1} still in flight; a bulk resumer applies the rest ` +
                'once its claim is approvals.resume_applying_after_seconds old',
            );
      }
      stopping = true;
    },
  };
}

/** True if `p` settled within `ms`; false (and `p` left to settle) otherwise. */
const within = (p: Promise<unknown>, ms: number): Promise<boolean> =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
