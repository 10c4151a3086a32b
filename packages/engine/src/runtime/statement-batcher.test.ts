import { describe, expect, it } from 'vitest';
import { StatementBatcher } from './statement-batcher.ts';

/** A batcher whose statements stay out until the test lets each go, recording what each carried. */
function heldBatcher(options: { maxInFlight: number; slowMs: number; secondFrom?: number; outWhileNoneSlow?: number }) {
  const sent: string[][] = [];
  const pending: (() => void)[] = [];
  const batcher = new StatementBatcher<string, string>({
    send: async (items) => {
      sent.push(items);
      await new Promise<void>((release) => pending.push(release));
      return items.map((item) => `done ${item}`);
    },
    key: (item) => item.split(':')[0]!,
    maxBatch: 3,
    ...options,
  });
  const releaseNext = () => pending.shift()!();
  /** Lets the statement that carried `item` return. */
  const release = (item: string) =>
    pending.splice(
      sent.findIndex((s) => s.includes(item)),
      1,
      () => {},
    )[0]!();
  return { batcher, sent, releaseNext, release, pending };
}

/** The end of the event loop's current turn. */
const turnEnd = () => new Promise<void>((resolve) => setImmediate(resolve));

const until = async (done: () => boolean) => {
  while (!done()) await new Promise((r) => setTimeout(r, 1));
};

describe('StatementBatcher (ADR 0045)', () => {
  it('sends a lone item at once, and the items that arrive while it is out together when it returns', async () => {
    const { batcher, sent, releaseNext } = heldBatcher({ maxInFlight: 4, slowMs: 60_000 });
    const first = batcher.submit('a:1');
    expect(sent).toEqual([['a:1']]);
    const rest = ['b:1', 'c:1', 'd:1', 'e:1'].map((item) => batcher.submit(item));
    expect(sent).toHaveLength(1);
    releaseNext();
    expect(await first).toBe('done a:1');
    await until(() => sent.length === 2);
    // At most maxBatch (3) in one statement; the next waits for it.
    expect(sent[1]).toEqual(['b:1', 'c:1', 'd:1']);
    releaseNext();
    await until(() => sent.length === 3);
    expect(sent[2]).toEqual(['e:1']);
    releaseNext();
    expect(await Promise.all(rest)).toEqual(['done b:1', 'done c:1', 'done d:1', 'done e:1']);
  });

  it('with a statement out, the items of one turn go together at its end, not the first of them alone (ADR 0083)', async () => {
    const { batcher, sent, release } = heldBatcher({ maxInFlight: 4, slowMs: 60_000, outWhileNoneSlow: 2 });
    void batcher.submit('a:1');
    const next = ['b:1', 'c:1', 'd:1'].map((item) => batcher.submit(item));
    // A second statement may go beside a:1's, but not before the turn that submitted b, c and d ends.
    expect(sent).toEqual([['a:1']]);
    await turnEnd();
    expect(sent).toEqual([['a:1'], ['b:1', 'c:1', 'd:1']]);
    // The callers of a returned statement go on in microtasks of one turn: their next items go as one
    // statement beside a:1's, not the first alone and the others behind it.
    const after = next.map((p) => p.then((done) => batcher.submit(done.replace('done ', '').replace(':1', ':2'))));
    release('b:1');
    await until(() => sent.length === 3);
    await turnEnd();
    expect(sent[2]).toEqual(['b:2', 'c:2', 'd:2']);
    expect(sent).toHaveLength(3);
    release('b:2');
    release('a:1');
    expect(await Promise.all(after)).toEqual(['done b:2', 'done c:2', 'done d:2']);
  });

  it('never puts two items of one key in a statement: the second keeps its place for the next', async () => {
    const { batcher, sent, releaseNext } = heldBatcher({ maxInFlight: 1, slowMs: 60_000 });
    const all = [batcher.submit('x:0'), batcher.submit('a:1'), batcher.submit('a:2'), batcher.submit('b:1')];
    releaseNext();
    await until(() => sent.length === 2);
    expect(sent[1]).toEqual(['a:1', 'b:1']);
    releaseNext();
    await until(() => sent.length === 3);
    expect(sent[2]).toEqual(['a:2']);
    releaseNext();
    expect(await Promise.all(all)).toEqual(['done x:0', 'done a:1', 'done a:2', 'done b:1']);
  });

  it('lets one more statement go beside one that is slow, up to maxInFlight', async () => {
    const { batcher, sent, pending } = heldBatcher({ maxInFlight: 2, slowMs: 5 });
    void batcher.submit('a:1');
    void batcher.submit('b:1');
    // b waits behind a until a has been out for slowMs, then goes beside it.
    expect(sent).toEqual([['a:1']]);
    await until(() => sent.length === 2);
    expect(sent[1]).toEqual(['b:1']);
    // Both out and both slow, at the limit of 2: c waits for one of them to return.
    void batcher.submit('c:1');
    await new Promise((r) => setTimeout(r, 30));
    expect(sent).toHaveLength(2);
    pending.shift()!();
    await until(() => sent.length === 3);
    expect(sent[2]).toEqual(['c:1']);
    while (pending.length > 0) pending.shift()!();
  });

  it('sends a second statement before any is slow only when the queue would fill it as well as the fullest out, and never a third', async () => {
    const { batcher, sent, release, pending } = heldBatcher({ maxInFlight: 4, slowMs: 60_000, secondFrom: 2 });
    void batcher.submit('a:1');
    void batcher.submit('b:1');
    await turnEnd();
    // One waiting is fewer than secondFrom: it waits for a's return.
    expect(sent).toEqual([['a:1']]);
    void batcher.submit('c:1');
    await turnEnd();
    // Two waiting, at least as many as a's statement carries: they go at the end of the turn, beside it.
    expect(sent).toEqual([['a:1'], ['b:1', 'c:1']]);
    for (const item of ['d:1', 'e:1', 'f:1']) void batcher.submit(item);
    await turnEnd();
    // Two out, none slow: a third never goes, however long the queue.
    expect(sent).toHaveLength(2);
    release('a:1');
    await until(() => sent.length === 3);
    expect(sent[2]).toEqual(['d:1', 'e:1', 'f:1']);
    release('b:1');
    await new Promise((r) => setTimeout(r, 5));
    // Out: one statement of three. Two waiting would fill a second less well: they wait.
    void batcher.submit('g:1');
    void batcher.submit('h:1');
    await new Promise((r) => setTimeout(r, 5));
    expect(sent).toHaveLength(3);
    void batcher.submit('i:1');
    await turnEnd();
    expect(sent[3]).toEqual(['g:1', 'h:1', 'i:1']);
    while (pending.length > 0) pending.shift()!();
  });

  it("never sends a run's next item while a statement carrying that run is out, beside a slow one or a second", async () => {
    for (const options of [
      { maxInFlight: 2, slowMs: 5 },
      { maxInFlight: 4, slowMs: 60_000, secondFrom: 1 },
    ]) {
      const { batcher, sent, release, pending } = heldBatcher(options);
      const first = batcher.submit('a:1');
      const next = batcher.submit('a:2');
      await new Promise((r) => setTimeout(r, 30));
      // a:1 is slow (or a second may go at once), yet a:2 waits: a run is in one statement at a time.
      expect(sent).toEqual([['a:1']]);
      void batcher.submit('b:1');
      await until(() => sent.length === 2);
      expect(sent[1]).toEqual(['b:1']);
      release('a:1');
      expect(await first).toBe('done a:1');
      await until(() => sent.length === 3);
      expect(sent[2]).toEqual(['a:2']);
      while (pending.length > 0) pending.shift()!();
      expect(await next).toBe('done a:2');
    }
  });

  it("resends a batch's items alone only when the server refused it; a lost answer is each item's error", async () => {
    const refusal = Object.assign(new Error('invalid byte sequence'), { code: '22021', severity: 'ERROR' });
    const lost = new Error('Connection terminated unexpectedly');
    for (const [failure, resent] of [
      [refusal, true],
      [lost, false],
    ] as const) {
      const sent: string[][] = [];
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const batcher = new StatementBatcher<string, string>({
        send: async (items) => {
          sent.push(items);
          if (sent.length === 1) await held;
          if (items.length > 1) throw failure;
          return items.map((item) => `done ${item}`);
        },
        key: (item) => item,
        maxInFlight: 1,
        slowMs: 60_000,
        maxBatch: 3,
      });
      const all = ['a', 'b', 'c'].map((item) =>
        batcher.submit(item).then(
          (done) => done,
          (err: unknown) => err,
        ),
      );
      release();
      const settled = await Promise.all(all);
      if (resent) {
        expect(sent).toEqual([['a'], ['b', 'c'], ['b'], ['c']]);
        expect(settled).toEqual(['done a', 'done b', 'done c']);
      } else {
        // The batch may have committed: sent again, b and c could be written twice.
        expect(sent).toEqual([['a'], ['b', 'c']]);
        expect(settled).toEqual(['done a', lost, lost]);
      }
    }
  });
});
