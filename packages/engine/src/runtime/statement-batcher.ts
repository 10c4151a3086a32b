import { refusedByServer } from '../db/refused-by-server.ts';

interface Waiting<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
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
  slowMs: number;
  /** The most items one statement carries. */
  maxBatch: number;
}

/**
 * Group commit in the engine (ADR 0045): an item is sent at once when no statement is out, so a lone
 * run waits for nothing; items that arrive while one is out are sent together, as one statement, when
 * it returns. The batch grows with the load and costs one round trip, one commit and one write on the
 * socket. A statement out for longer than `slowMs` lets one more go (up to `maxInFlight`): a batch
 * waiting on a held row lock delays the items that arrive after it by `slowMs` at most. A batch the
 * server refused wrote nothing (one statement), so each of its items is sent again alone, in turn, and
 * meets exactly the fate it would have met unbatched: a batch is never the reason an item fails. A
 * batch whose answer was lost (a broken connection) may have committed: sent again, an item would be
 * written twice (a start) or told it lost what it had won (a business key, an outcome's fence), so
 * each of its items gets that error, as a lone item would.
 */
export class StatementBatcher<I, R> {
  private readonly queue: Waiting<I, R>[] = [];
  private inFlight = 0;
  /** Statements in flight for longer than `slowMs`. */
  private slow = 0;

  constructor(private readonly options: StatementBatcherOptions<I, R>) {}

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < Math.min(this.options.maxInFlight, 1 + this.slow)) {
      const batch = this.take();
      this.inFlight++;
      let slow = false;
      const timer = setTimeout(() => {
        slow = true;
        this.slow++;
        this.pump();
      }, this.options.slowMs);
      timer.unref();
      void (batch.length === 1 ? this.sendAlone(batch[0]!) : this.flush(batch)).finally(() => {
        clearTimeout(timer);
        if (slow) this.slow--;
        this.inFlight--;
        this.pump();
      });
    }
  }

  /** The oldest waiting items, at most `maxBatch`, no two with one key; the others keep their places. */
  private take(): Waiting<I, R>[] {
    // A lone item (every statement at c = 1) goes as it is: no key to compare, no queue to rebuild.
    if (this.queue.length === 1) return [this.queue.pop()!];
    const batch: Waiting<I, R>[] = [];
    const keys = new Set<string>();
    const left: Waiting<I, R>[] = [];
    for (const waiting of this.queue) {
      const key = this.options.key(waiting.item);
      if (batch.length < this.options.maxBatch && !keys.has(key)) {
        keys.add(key);
        batch.push(waiting);
      } else left.push(waiting);
    }
    this.queue.splice(0, this.queue.length, ...left);
    return batch;
  }

  /** Several items as one statement (a lone item goes straight to {@link sendAlone}). */
  private async flush(batch: Waiting<I, R>[]): Promise<void> {
    let results: R[];
    try {
      results = await this.options.send(batch.map((w) => w.item));
    } catch (err) {
      if (!refusedByServer(err)) {
        for (const waiting of batch) waiting.reject(err);
        return;
      }
      // One statement: nothing of the batch was written. Each item alone meets its own fate, one
      // after the other, in this batch's slot: a refused batch never floods the pool.
      for (const waiting of batch) await this.sendAlone(waiting);
      return;
    }
    batch.forEach((w, i) => w.resolve(results[i]!));
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
