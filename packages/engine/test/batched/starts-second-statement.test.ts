import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startInBatch } from '../../src/api/start-in-batch.ts';
import type { Database, SqlDriver } from '../../src/db/database.ts';
import type { RawStatement } from '../../src/db/raw-db.ts';
import { sendsRounds } from '../../src/runtime/run-statement-batches.ts';
import type { StartedRun } from '../../src/store/insert-started-run.ts';
import { turnEnd } from '../support/round-items.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';

/**
 * ADR 0063: the starts' batcher sends under the transitions' limits (ADR 0059). Starts that would
 * fill a statement as well as the one out go beside it at once, instead of waiting for its return or
 * for it to turn slow; one start waiting alone still waits, to ride in a fuller statement. Where the
 * driver sends rounds (PostgreSQL), starts go in the rounds, two of which may be out while none is
 * slow (ADR 0076): a second start goes at once, a third waits.
 */
const startsText = '/* sagaflow: starts */';

const started = (n: number, businessKey: string | null = null): StartedRun => ({
  flowName: 'second-start',
  flowVersion: 1,
  input: { n },
  businessKey,
  tags: [],
  expiresAt: null,
  runTimeoutAt: null,
  now: new Date(),
  lease: null,
});

/**
 * The driver with each start statement's number of starts noted as it is sent (before any answer), and
 * held there until `release`: what is noted at the end of a turn went beside the statements out.
 */
function noteStarts(db: Database): { driver: SqlDriver; sizes: number[]; release: () => void } {
  const sizes: number[] = [];
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const statement = async (s: RawStatement, limits?: Parameters<SqlDriver['statement']>[1]) => {
    if (s.text.trim().startsWith(startsText)) {
      sizes.push((s.values[0] as unknown[]).length);
      await released;
    }
    return db.driver.statement(s, limits);
  };
  return { driver: { ...db.driver, statement }, sizes, release };
}

/**
 * Stops the clock a statement turns slow by (the batcher reads `Date.now()` and arms a `slowMs` timer,
 * ADR 0097) while the starts are held: what goes beside the statements out is then decided by the rules
 * alone. On a loaded machine a turn can take longer than `slowMs`, and a statement that turned slow
 * rightly lets one more go. Only timers and Date are faked: `setImmediate`, which ends a turn, stays real.
 * The real clock is back before the statements are answered.
 */
const stopTheSlowClock = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });

describe(`starts go beside the start statement out once they would fill one as well (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('two starts behind a lone one go as a second statement at the end of their turn; a single one behind it waits', async () => {
    // A submit with nothing out sends at once; one with a statement out, at the end of its turn (ADR
    // 0083). The statements sent stay out until released, so what is noted at a turn's end went beside them.
    const { driver, sizes, release } = noteStarts(db);
    const rounds = sendsRounds(db.driver);
    stopTheSlowClock();
    const first = [startInBatch(driver, started(1)), startInBatch(driver, started(2))];
    expect(sizes, 'a lone start goes at once').toEqual([1]);
    await turnEnd();
    if (rounds) expect(sizes, 'a second round goes beside the first').toEqual([1, 1]);
    else expect(sizes, 'one start behind one out waits for its return').toEqual([1]);
    const more = [startInBatch(driver, started(3))];
    await turnEnd();
    if (rounds) expect(sizes, 'a third waits while two are out and neither is slow').toEqual([1, 1]);
    else expect(sizes, 'two behind one out fill a statement as well: they go beside it').toEqual([1, 2]);
    vi.useRealTimers();
    release();

    const all = await Promise.all([...first, ...more]);
    expect(new Set(all.map((s) => s.runId)).size).toBe(3);
    const counted = await db.prisma.$queryRaw<{ count: bigint }[]>`
      select count(*) from "sagaflow"."flow_runs" where flow_name = 'second-start'`;
    expect(counted[0]?.count).toBe(3n);
  });

  it('two starts of one business key never share the second statement: the twin waits for its own', async () => {
    const { driver, sizes, release } = noteStarts(db);
    stopTheSlowClock();
    const results = [
      startInBatch(driver, started(10, 'k')),
      startInBatch(driver, started(11, 'k')),
      startInBatch(driver, started(12)),
    ];
    await turnEnd();
    // The twin of the start out may not go; the one start left is fewer than the second rule asks, or,
    // where rounds go (two out), goes beside it alone.
    expect(sizes).toEqual(sendsRounds(db.driver) ? [1, 1] : [1]);
    vi.useRealTimers();
    release();
    const settled = await Promise.allSettled(results);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});
