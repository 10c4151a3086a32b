import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/index.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { newMessageId, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';

const minute = 60_000;

/** A reminder that re-arms itself in the state it expects: Open → Open every minute. */
function reminder() {
  return defineProcess({
    name: 'reminder',
    states: ['Open', 'Done'],
    initial: 'Open',
    final: ['Done'],
    data: z.object({ key: z.string(), reminded: z.number() }),
    initialData: (key) => ({ key, reminded: 0 }),
    messages: { Start: z.object({ key: z.string() }), Stop: z.object({ key: z.string() }) },
    correlate: (m) => m.payload.key,
    timeouts: { Remind: { afterMs: minute, expects: 'Open' } },
    on: {
      Start: [{ from: 'Open', to: 'Open', schedule: ['Remind'] }],
      Remind: [
        { from: 'Open', to: 'Open', schedule: ['Remind'], then: (d) => ({ data: { ...d, reminded: d.reminded + 1 } }) },
      ],
      Stop: [{ from: 'Open', to: 'Done' }],
    },
  });
}

/**
 * Seed 002 / issue 5: an instance shows "when the next pending timer is due". saveSagaInstance
 * computes next_timer_due_at as the earliest Pending timeout of the new state, but the sweep saves
 * the instance BEFORE it marks the timeout being delivered as Delivered, so that very timeout (due in
 * the past, about to be Delivered) is counted as the next one.
 */
describe(`next timer due after a timeout re-arms itself (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('nextTimerDueAt names the Pending re-armed timer, not the one just delivered', async () => {
    const clock = new TestClock(new Date('2026-03-01T10:00:00.000Z'));
    const { pm } = processManagerOn(db, { processes: [reminder()], clock });
    const key = newOrderId();
    const started = await pm.deliver('reminder', { id: newMessageId('start'), type: 'Start', payload: { key } });
    const id = started.instanceId!;
    expect((await pm.find(id))?.nextTimerDueAt).toEqual(new Date(clock.now().getTime() + minute));

    clock.advance(minute);
    expect((await pm.sweepProcessTimeouts()).delivered).toBeGreaterThanOrEqual(1);

    const timers = await db.prisma.processTimeout.findMany({ where: { instance_id: id }, orderBy: { due_at: 'asc' } });
    expect(timers.map((t) => t.status)).toEqual(['Delivered', 'Pending']);
    const pending = timers.find((t) => t.status === 'Pending')!;
    const row = await db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } });
    expect(row.next_timer_due_at).toEqual(pending.due_at);
  });
});
