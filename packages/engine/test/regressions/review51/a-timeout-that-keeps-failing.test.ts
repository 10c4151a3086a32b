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

  async function failingInstance(config: { quarantine_after_seconds?: number } = {}) {
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

  it('is bounded: past the quarantine budget the instance is held (or the timer stops), not retried for ever', async () => {
    const h = await failingInstance({ quarantine_after_seconds: 300 });
    await failFor(h, 120); // an hour, twelve times the five-minute budget
    const instance = await h.pm.find(h.id);
    const t = await db.prisma.processTimeout.findFirstOrThrow({ where: { instance_id: h.id } });
    expect(
      { status: instance?.status, timer: t.status },
      `after 120 failures in an hour: instance ${instance?.status}, timer ${t.status} with ${t.attempts} attempts`,
    ).not.toEqual({ status: 'ACTIVE', timer: 'Pending' });
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
    const applied = await db.prisma.processTransition.findMany({
      where: { instance_id: h.id, outcome: 'applied', to_state: 'Compensated' },
    });
    expect(applied).toHaveLength(1);
    expect(await h.pm.sweepProcessTimeouts()).toMatchObject({ delivered: 0, failed: 0 });
  });
});
