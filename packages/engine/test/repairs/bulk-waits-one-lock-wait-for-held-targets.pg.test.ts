import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkItemLockWaitFloorMs } from '../../src/repairs/apply-bulk-repair.ts';
import { openTallyEngines, type TallyEngines } from '../regressions/review54/support/tally-engines.ts';

/**
 * ADR 0132's addendum. A bulk whose targets another session holds (an abandoned transaction over a batch
 * of instances) waited a full lock wait (half `processes.transaction_timeout_ms`, 15 s by default) for each
 * held item: 100 held instances kept the operator's request, or the approval's resumer, waiting 25 min.
 * Now the bulk spends one lock wait in all on its busy items; once that is spent, each later item waits
 * the floor. A target nobody holds is applied, before and after.
 */
const TX_MS = 4_000;
const LOCK_WAIT_MS = TX_MS / 2;
const HELD = 5;

describe('a bulk over held targets waits one lock wait, not one per item (real PostgreSQL)', () => {
  let t: TallyEngines;
  beforeAll(async () => {
    t = await openTallyEngines({ txMs: TX_MS });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('applies the free targets, reports the held ones busy naming the wait each had, and takes about one lock wait', async () => {
    const instances = [];
    for (let i = 0; i < HELD + 2; i++) instances.push((await t.begin()).instance);
    const [free1, ...rest] = instances;
    const free2 = rest.pop()!;
    const held = await t.holdInstances(rest.map((i) => i.id));

    const started = Date.now();
    const result = await t.engines[0]!.repairs.applyBulk({
      kind: 'instance.force_transition',
      to: 'Done',
      actor: 'ana',
      reason: 'closing tallies an abandoned session holds',
      idempotencyKey: randomUUID(),
      items: [free1!, ...rest, free2].map((i) => ({
        target: { instanceId: i.id },
        expected: { state: 'Open', version: i.version },
      })),
    });
    const tookMs = Date.now() - started;
    await held.rollback();

    expect(result.items.map((i) => i.outcome)).toEqual(['applied', ...rest.map(() => 'busy'), 'applied']);
    // The first held item waits the whole lock wait; it spends the bulk's budget, so each later one waits the floor.
    const waits = result.items
      .filter((i) => i.outcome === 'busy')
      .map((i) => Number(/held a row it needed past (\d+) ms/.exec(i.message ?? '')?.[1]));
    expect(waits).toEqual([LOCK_WAIT_MS, ...Array<number>(HELD - 1).fill(bulkItemLockWaitFloorMs)]);
    // PostgreSQL waits at least its lock_timeout before giving up, so a lock wait per item takes at least
    // HELD × LOCK_WAIT_MS (10 s); one lock wait and the floors take about 2.4 s, and the bound leaves a
    // loaded machine 6.6 s more.
    expect(tookMs).toBeLessThan(2 * LOCK_WAIT_MS + HELD * 1_000);
    expect(tookMs).toBeGreaterThanOrEqual(LOCK_WAIT_MS);

    // Nothing changed on the busy ones: drafted against the same state, they apply once let go.
    const again = await t.engines[0]!.repairs.applyBulk({
      kind: 'instance.force_transition',
      to: 'Done',
      actor: 'ana',
      reason: 'closing tallies an abandoned session held',
      idempotencyKey: randomUUID(),
      items: rest.map((i) => ({ target: { instanceId: i.id }, expected: { state: 'Open', version: i.version } })),
    });
    expect(again.items.map((i) => i.outcome)).toEqual(rest.map(() => 'applied'));
  }, 60_000);
});
