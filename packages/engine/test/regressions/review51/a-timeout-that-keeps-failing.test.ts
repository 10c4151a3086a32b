import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/index.ts';
import { newMessageId, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * Review 51. A process timeout whose handler throws every time. ADR 0008: it stays Pending with
 * `attempts`, `last_error` and a `retry_at` of `timeout_retry_seconds`, and records nothing on the
 * instance. Seed 004: "Store updated_at, the last message ID, failure reason"; ARCHITECTURE
 * invariant: instances that are stuck are shown with why. A job system retries a failing handler
 * with growing delays and stops somewhere; Temporal shows a failing workflow task on the execution.
 */
let broken = true;
const failure = 'r51 refund provider refused: 500 internal error';
let made = 0;
const refundDesk = () =>
  defineProcess({
    name: `review51-refund-${++made}`,
    states: ['Open', 'Refunding', 'Compensated', 'Done'],
    initial: 'Open',
    final: ['Compensated', 'Done'],
    data: z.object({ key: z.string() }),
    initialData: (key) => ({ key }),
    messages: { Refund: z.object({ key: z.string() }), Note: z.object({ key: z.string() }) },
    correlate: (m) => m.payload.key,
    timeouts: { refundLate: { afterMs: 60_000, expects: 'Refunding' } },
    on: {
      Refund: [{ from: 'Open', to: 'Refunding', schedule: ['refundLate'] }],
      Note: [{ from: 'Refunding', to: 'Refunding' }],
      refundLate: [
        {
          from: 'Refunding',
          to: 'Compensated',
          then: () => {
            if (broken) throw new Error(failure);
            return {};
          },
        },
      ],
    },
  });

describe(`a timeout whose handler keeps throwing (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  async function failingInstance(
    config: { quarantine_after_seconds?: number; timeout_retry_max_seconds?: number } = {},
  ) {
    broken = true;
    const desk = refundDesk();
    const h = processManagerOn(db, { processes: [desk], config });
    const key = newOrderId();
    const id = (await h.pm.deliver(desk, { id: newMessageId('refund'), type: 'Refund', payload: { key } })).instanceId!;
    h.clock.advance(60_000);
    return { ...h, id, key };
  }

  /** Runs passes at each retry time; returns the delay the engine chose after each failure, in ms. */
  async function failFor(h: Awaited<ReturnType<typeof failingInstance>>, passes: number) {
    const delays: number[] = [];
    for (let i = 0; i < passes; i++) {
      const r = await h.pm.sweepProcessTimeouts();
      expect(r.failed).toBe(1);
      const t = await db.prisma.processTimeout.findFirstOrThrow({ where: { instance_id: h.id } });
      delays.push(t.retry_at!.getTime() - h.clock.now().getTime());
      h.clock.advance(t.retry_at!.getTime() - h.clock.now().getTime());
    }
    return delays;
  }

  it('is retried with growing delays, not at the same interval for ever', async () => {
    const h = await failingInstance();
    const delays = await failFor(h, 5);
    // Seen: [30000, 30000, 30000, 30000, 30000].
    expect(delays.at(-1)!, `delays after each failure: ${delays.join(', ')}`).toBeGreaterThan(delays[0]!);
  });

  it("the instance's own view (find, findByStatus) says what it has been failing on for an hour", async () => {
    const h = await failingInstance({ quarantine_after_seconds: 300 });
    await failFor(h, 120); // an hour of failing at 30 s
    const t = await db.prisma.processTimeout.findFirstOrThrow({ where: { instance_id: h.id } });
    expect(t.attempts).toBe(120);
    const found = await h.pm.find(h.id);
    const listed = (await h.pm.findByStatus('ACTIVE', new Date(h.clock.now().getTime() + 1), 10_000)).find(
      (i) => i.id === h.id,
    );
    expect.soft(JSON.stringify(found), 'find(id)').toContain(failure);
    expect(JSON.stringify(listed ?? null), 'findByStatus(ACTIVE)').toContain(failure);
  });

  // Review 51 asked for the instance to be held (or the timer stopped) past the quarantine budget. Fix
  // 51b decided otherwise (ADR 0127): seed 002 lists a failing timeout among the failures that record
  // nothing and never quarantine, so it is retried for ever, but at a bounded rate (the delay doubles up
  // to processes.timeout_retry_max_seconds) and visibly (the instance's failingTimeout). This asserts that.
  it('is bounded: past the quarantine budget it is retried at most every timeout_retry_max_seconds, and the instance says so', async () => {
    const h = await failingInstance({ quarantine_after_seconds: 300, timeout_retry_max_seconds: 600 });
    const delays = await failFor(h, 12);
    // 30, 60, 120, 240, 480, then the cap for ever.
    expect(delays, `delays: ${delays.join(', ')}`).toEqual([
      30_000, 60_000, 120_000, 240_000, 480_000, 600_000, 600_000, 600_000, 600_000, 600_000, 600_000, 600_000,
    ]);
    const instance = await h.pm.find(h.id);
    expect(instance?.status, 'a failing timeout never quarantines (seed 002)').toBe('ACTIVE');
    expect(instance?.failure, 'the failure record stays about messages (seed 002)').toBeNull();
    expect(instance?.failingTimeout).toMatchObject({ name: 'refundLate', attempts: 12, lastError: failure });
  });

  it('(held) once the handler is fixed the timer fires once and leaves no error behind', async () => {
    const h = await failingInstance();
    await failFor(h, 3);
    broken = false;
    const r = await h.pm.sweepProcessTimeouts();
    expect(r).toMatchObject({ delivered: 1, failed: 0 });
    const instance = await h.pm.find(h.id);
    expect(instance).toMatchObject({ status: 'COMPLETED', currentState: 'Compensated', nextTimerDueAt: null });
    expect(instance?.failure).toBeNull();
    expect(instance?.failingTimeout, 'a delivered timeout is not failing any more').toBeNull();
    const applied = await db.prisma.processTransition.findMany({
      where: { instance_id: h.id, outcome: 'applied', to_state: 'Compensated' },
    });
    expect(applied).toHaveLength(1);
    expect(await h.pm.sweepProcessTimeouts()).toMatchObject({ delivered: 0, failed: 0 });
  });
});
