import { refusedByServer } from '../db/refused-by-server.ts';

interface Waiting<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

/** A statement out: its items' keys and count, when it went (ms since the epoch), and whether it is slow yet. */
interface OutStatement {
  keys: string[];
  size: number;
  sentAt: number;
  slow: boolean;
}

export interface StatementBatcherOptions<I, R> {
  /** Sends items as ONE statement (atomic: all written or none) and returns each item's result, in order. */
  send: (items: I[]) => Promise<R[]>;
  /** Items with the same key never go in one batch (one statement must not carry two of a run's transitions). */
  key: (item: I) => string;
  /**
   * Statements in flight at most. One goes while none is slow; each statement out for longer than
   * `slowMs` (waiting on a run's lock, say) lets one more go, so one held row never holds up the rest.
   */
  maxInFlight: number;
  /**
   * Statements out at once while none is slow: 1 unless set (ADR 0045), 2 for the rounds (ADR 0076),
   * where one round out at a time left PostgreSQL's work on one backend, one core.
   */
  outWhileNoneSlow?: number;
  slowMs: number;
  /** The most items one statement carries. */
  maxBatch: number;
  /**
   * When set, one more statement may go beside those out before any is slow, once the items that could
   * go in it are at least this many and at least as many as the fullest statement out carries (ADR
   * 0059): a queue that would fill a statement as well as the one in flight goes now instead of
   * waiting for its return; a smaller one waits, to ride in a fuller one. Unset: never.
   */
  secondFrom?: number;
  /**
   * The kind of an item, where one statement out carries several kinds side by side (a round, ADR
   * 0066): `maxBatch` then bounds each kind's items in it, not the round's. Unset: one kind.
   */
  kindOf?: (item: I) => string;
  /**
   * Whether a failure of `send` says that nothing was sent at all (no connection in time for a
   * round, ADR 0066) and that `items`, one kind's part of it, go again: each kind it says so of then
   * goes as a batch of its own, side by side in this slot, under its kind's own rules; the others
   * get the error (a start that has waited all a lone start waits, ADR 0070). Only asked of a batch
   * holding several kinds.
   */
  notSent?: (err: unknown, items: I[]) => boolean;
}

/**
 * Group commit in the engine (ADR 0045): an item is sent at once when no statement is out, so a lone
 * run waits for nothing; items that arrive while one is out are sent together, as one statement, when
 * it returns, or, where a second may go (ADR 0076), at the end of the event loop's pass they arrived in
 * (ADR 0083). The batch grows with the load and costs one round trip, one commit and one write on the
 * socket. A statement out for longer than `slowMs` lets one more go (up to `maxInFlight`): a batch
 * waiting on a held row lock delays the items that arrive after it by `slowMs` at most. A batch the
 * server refused wrote nothing (one statement), so each of its items is sent again alone, in turn, and
 * meets exactly the fate it would have met unbatched: a batch is never the reason an item fails. A
 * batch whose answer was lost (a broken connection) may have committed: sent again, an item would be
 * written twice (a start) or told it lost what it had won (a business key, an outcome's fence), so
 * each of its items gets that error, as a lone item would. An item whose key is in a statement out
 * waits for that statement's return, whatever the rule: a run is never in two statements at once.
 */
export class StatementBatcher<I, R> {
  private readonly queue: Waiting<I, R>[] = [];
  /** The statements out: their keys, item counts, when each went, and whether it is slow yet. */
  private readonly out = new Set<OutStatement>();
  /** Statements out known to have been in flight for longer than `slowMs`. */
  private slow = 0;
  /** Armed while items wait behind statements out: it fires when the oldest of those turns slow. */
  private slowTimer: NodeJS.Timeout | undefined;
  /** A pump is due at the end of this turn ({@link pumpAfterTurn}). */
  private pumpScheduled = false;

  constructor(private readonly options: StatementBatcherOptions<I, R>) {}

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.out.size === 0) this.pump();
      else this.pumpAfterTurn();
    });
  }

  /**
   * With a statement out, an item waits for the end of the event loop's turn (ADR 0083): the runs a
   * returned statement answered go on in microtasks of one turn, so their next items go together
   * instead of the first alone and the rest behind it.
   */
  private pumpAfterTurn(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /**
   * Sends what may go, then, while items still wait behind statements out, watches for the next of
   * those to turn slow, which may let one more go. A statement's slowness matters only to items
   * waiting: nothing is armed while none waits (every statement at c = 1), where a timer per
   * statement used to be (ADR 0097).
   */
  private pump(): void {
    if (this.queue.length === 0) return;
    if (this.out.size > 0) this.markSlow();
    this.pumpQueue();
    if (this.queue.length > 0 && this.out.size > 0) this.watchSlow();
  }

  /** Counts the statements out that have been out for `slowMs` by now as slow. */
  private markSlow(): void {
    const now = Date.now();
    for (const s of this.out)
      if (!s.slow && now - s.sentAt >= this.options.slowMs) {
        s.slow = true;
        this.slow++;
      }
  }

  /** Arms the timer for the moment the oldest statement out that is not slow yet turns slow. */
  private watchSlow(): void {
    if (this.slowTimer !== undefined) return;
    let oldest = Infinity;
    for (const s of this.out) if (!s.slow && s.sentAt < oldest) oldest = s.sentAt;
    if (oldest === Infinity) return;
    this.slowTimer = setTimeout(
      () => {
        this.slowTimer = undefined;
        this.pump();
      },
      Math.max(0, oldest + this.options.slowMs - Date.now()),
    );
    this.slowTimer.unref();
  }

  private pumpQueue(): void {
    const { maxInFlight, secondFrom, outWhileNoneSlow = 1 } = this.options;
    while (this.queue.length > 0 && this.out.size < maxInFlight) {
      // A lone item with nothing out (every statement at c = 1) goes as it is: no key set, no queue rebuild.
      if (this.out.size === 0 && this.queue.length === 1) {
        this.send([this.queue.pop()!]);
        continue;
      }
      const byRule = this.out.size < outWhileNoneSlow + this.slow;
      if (!byRule && (secondFrom === undefined || this.out.size >= outWhileNoneSlow + 1 + this.slow)) return;
      const picked = this.pick();
      if (picked.length === 0) return;
      if (!byRule && picked.length < Math.max(secondFrom!, ...[...this.out].map((s) => s.size))) return;
      // Out of the queue before the send starts, so a submit made while sending cannot pick them again.
      const taken = new Set(picked);
      this.queue.splice(0, this.queue.length, ...this.queue.filter((w) => !taken.has(w)));
      this.send(picked);
    }
  }

  /** The oldest waiting items, at most `maxBatch`, no two with one key and none with a key out. */
  private pick(): Waiting<I, R>[] {
    const { kindOf, maxBatch } = this.options;
    const batch: Waiting<I, R>[] = [];
    const keys = new Set<string>();
    /** Items picked per kind, where kinds share a statement: each kind's part is bounded on its own. */
    const perKind = kindOf === undefined ? undefined : new Map<string, number>();
    for (const s of this.out) for (const key of s.keys) keys.add(key);
    for (const waiting of this.queue) {
      if (perKind === undefined && batch.length === maxBatch) break;
      const key = this.options.key(waiting.item);
      if (keys.has(key)) continue;
      if (perKind !== undefined) {
        const kind = kindOf!(waiting.item);
        const picked = perKind.get(kind) ?? 0;
        if (picked === maxBatch) {
          // Its key stays blocked: a later item of that key must not overtake it into this round.
          keys.add(key);
          continue;
        }
        perKind.set(kind, picked + 1);
      }
      keys.add(key);
      batch.push(waiting);
    }
    return batch;
  }

  private send(batch: Waiting<I, R>[]): void {
    const statement: OutStatement = {
      keys: batch.map((w) => this.options.key(w.item)),
      size: batch.length,
      sentAt: Date.now(),
      slow: false,
    };
    this.out.add(statement);
    const returned = () => {
      if (statement.slow) this.slow--;
      this.out.delete(statement);
      if (this.out.size === 0 && this.slowTimer !== undefined) {
        clearTimeout(this.slowTimer);
        this.slowTimer = undefined;
      }
      this.pump();
    };
    if (batch.length > 1) {
      void this.flush(batch).finally(returned);
      return;
    }
    // A lone item (every statement at c = 1): its result goes straight to its waiter, and the slot is
    // given back in the same tick, before the waiter goes on (ADR 0097).
    const [waiting] = batch as [Waiting<I, R>];
    const failed = (err: unknown) => {
      waiting.reject(err);
      returned();
    };
    let sent: Promise<R[]>;
    try {
      sent = this.options.send([waiting.item]);
    } catch (err) {
      // A send that throws before it returns a promise fails its item like one that rejects (after
      // this pump, which must not be entered again from inside its own send).
      queueMicrotask(() => failed(err));
      return;
    }
    sent.then(([result]) => {
      waiting.resolve(result!);
      returned();
    }, failed);
  }

  /** Several items as one statement (a lone item goes as {@link send} sends it). */
  private async flush(batch: Waiting<I, R>[]): Promise<void> {
    let results: R[];
    try {
      results = await this.options.send(batch.map((w) => w.item));
    } catch (err) {
      const { notSent } = this.options;
      const kinds = this.byKind(batch);
      if (kinds.size > 1 && notSent !== undefined) {
        const again = new Map(
          [...kinds.values()].map((g) => [
            g,
            notSent(
              err,
              g.map((w) => w.item),
            ),
          ]),
        );
        if ([...again.values()].includes(true)) {
          // Nothing went out: each kind's items go as their own statement, under their own rules,
          // or get the error where their kind says that a resend would outwait its caller.
          await Promise.all(
            [...again].map(([g, resend]) =>
              !resend ? this.failed(g, err) : g.length === 1 ? this.sendAlone(g[0]!) : this.flush(g),
            ),
          );
          return;
        }
      }
      await this.failed(batch, err);
      return;
    }
    batch.forEach((w, i) => w.resolve(results[i]!));
  }

  /** The batch's items by kind, in batch order; one group when the batcher has no kinds. */
  private byKind(batch: Waiting<I, R>[]): Map<string, Waiting<I, R>[]> {
    const { kindOf } = this.options;
    const kinds = new Map<string, Waiting<I, R>[]>();
    for (const waiting of batch) {
      const kind = kindOf === undefined ? '' : kindOf(waiting.item);
      const same = kinds.get(kind);
      if (same === undefined) kinds.set(kind, [waiting]);
      else same.push(waiting);
    }
    return kinds;
  }

  /**
   * A batch's statement failed. Refused by the server, it wrote nothing (one statement, or one
   * round's transaction), and each item meets its own fate, in this batch's slot, one send after the
   * other, so a refused batch never floods the pool: a round's kinds each go again as their kind's
   * statement (one kind's refusal, such as a start whose business key is taken, does not send the
   * other kinds' items one by one), and a refused statement of one kind goes item by item. Otherwise it
   * may have committed, and every item gets the error.
   */
  private async failed(batch: Waiting<I, R>[], err: unknown): Promise<void> {
    if (!refusedByServer(err)) {
      for (const waiting of batch) waiting.reject(err);
      return;
    }
    const kinds = this.byKind(batch);
    if (kinds.size > 1) {
      for (const g of kinds.values()) await (g.length === 1 ? this.sendAlone(g[0]!) : this.flush(g));
      return;
    }
    for (const waiting of batch) await this.sendAlone(waiting);
  }

  private async sendAlone(waiting: Waiting<I, R>): Promise<void> {
    try {
      const [result] = await this.options.send([waiting.item]);
      waiting.resolve(result!);
    } catch (err) {
      waiting.reject(err);
    }
  }
}
