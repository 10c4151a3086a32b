/**
 * The NOTIFYs a pool's own listener is still to hear for jobs its own process queued due now and
 * woke the loop for in-process already: a start that got no slot, a give-back. Such a notification
 * says nothing the loop does not know, and it usually arrives after the claim that took its job;
 * taken as a wake it would make the pool refuse hand-offs until it claimed again, for a job it
 * already runs (ADR 0038, addendum of 2026-12-01).
 *
 * A notification carries only the job's kind, so ours are told from others' by count: one is
 * expected before each statement that will notify (so one arriving before the statement's own
 * reply is still recognised), and given up when the statement turns out not to have notified. A
 * notification that never comes (its LISTEN was lost, the business clock runs ahead of the server's
 * so the job was not due) is forgotten after `maxAgeMs` and whenever a LISTEN takes hold again;
 * until then it may take another's notification for ours, which costs that job its early wake and
 * nothing else: the poll, and the loop's next claim, still find it.
 */
export interface OwnNotifications {
  /** Before a statement that notifies if it commits a due job; call the result with whether it did. */
  expect(): (notified: boolean) => void;
  /** A notification was heard: true if it is one this process expected (it is then used up). */
  take(): boolean;
  /** A LISTEN took hold: nothing expected before it can arrive any more. */
  forget(): void;
}

/** `now` is a monotonic clock in ms (a test passes its own). */
export function trackOwnNotifications(maxAgeMs: number, now: () => number = () => performance.now()): OwnNotifications {
  /** When each expectation was made, oldest first. */
  const pending: { at: number }[] = [];
  return {
    expect() {
      const entry = { at: now() };
      pending.push(entry);
      return (notified) => {
        if (notified) return;
        const i = pending.indexOf(entry);
        if (i >= 0) pending.splice(i, 1);
      };
    },
    take() {
      const oldest = now() - maxAgeMs;
      while (pending.length > 0 && pending[0]!.at < oldest) pending.shift();
      return pending.shift() !== undefined;
    },
    forget() {
      pending.length = 0;
    },
  };
}
