import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/index.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { newMessageId, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';

const fiveSeconds = 5_000;

/** Arm → Waiting (a 5 s timeout expecting Waiting), Cancel → Cancelled, Arm again → Waiting. */
function alarm(name: string) {
  return defineProcess({
    name,
    states: ['Idle', 'Waiting', 'Cancelled', 'Rang'],
    initial: 'Idle',
    final: ['Rang'],
    data: z.object({ key: z.string(), touched: z.number() }),
    initialData: (key) => ({ key, touched: 0 }),
    messages: {
      Arm: z.object({ key: z.string() }),
      Cancel: z.object({ key: z.string() }),
      Touch: z.object({ key: z.string() }),
    },
    correlate: (m) => m.payload.key,
    timeouts: { Ring: { afterMs: fiveSeconds, expects: 'Waiting' } },
    on: {
      Arm: [{ from: ['Idle', 'Cancelled'], to: 'Waiting', schedule: ['Ring'] }],
      Cancel: [{ from: 'Waiting', to: 'Cancelled' }],
      // Stays in Waiting: the same visit, so the armed timeout stays live.
      Touch: [{ from: 'Waiting', to: 'Waiting', then: (d) => ({ data: { ...d, touched: d.touched + 1 } }) }],
      Ring: [{ from: 'Waiting', to: 'Rang' }],
    },
  });
}

/**
 * Issue 13, item 4: a timeout was matched to its instance by the NAME of the state it expects, so a
 * timeout armed in a visit to Waiting that the instance had left (cancelled) fired when the instance
 * came back to Waiting, early, and the timeout of the new visit was then ignored. A timeout belongs
 * to the visit that armed it.
 */
describe(`a timeout belongs to the state visit that armed it (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const send = (type: 'Arm' | 'Cancel' | 'Touch', key: string) => ({
    id: newMessageId(type.toLowerCase()),
    type,
    payload: { key },
  });

  it('a timeout of a visit the instance left is a recorded no-op when it returns to that state; the new visit’s timeout fires on time', async () => {
    const clock = new TestClock(new Date('2026-03-01T10:00:00.000Z'));
    const { pm } = processManagerOn(db, { processes: [alarm('alarm')], clock });
    const key = newOrderId();
    const t0 = clock.now().getTime();

    const id = (await pm.deliver('alarm', send('Arm', key))).instanceId!;
    expect((await pm.deliver('alarm', send('Cancel', key))).to).toBe('Cancelled');
    clock.advance(500);
    expect((await pm.deliver('alarm', send('Arm', key))).to).toBe('Waiting');
    const timers = await db.prisma.processTimeout.findMany({ where: { instance_id: id }, orderBy: { due_at: 'asc' } });
    expect(timers.map((t) => t.due_at.getTime() - t0)).toEqual([fiveSeconds, fiveSeconds + 500]);
    const [first, second] = timers;
    // The next timer is the one of the visit the instance is in.
    expect((await pm.find(id))?.nextTimerDueAt).toEqual(new Date(t0 + fiveSeconds + 500));

    // The first visit's timeout comes due: the instance is back in Waiting, but not in that visit.
    clock.advance(fiveSeconds - 500);
    expect(await pm.sweepProcessTimeouts()).toEqual({ delivered: 1, failed: 0 });
    expect(await pm.find(id)).toMatchObject({ status: 'ACTIVE', currentState: 'Waiting' });
    const afterFirst = (await pm.history(id)).transitions.at(-1);
    expect(afterFirst).toMatchObject({
      messageId: first!.id,
      outcome: 'ignored',
      from: 'Waiting',
      to: 'Waiting',
      detail: { reason: 'stale_timeout' },
    });

    // The second visit's timeout fires when it is due, and moves the instance on.
    clock.advance(499);
    expect(await pm.sweepProcessTimeouts()).toEqual({ delivered: 0, failed: 0 });
    clock.advance(1);
    expect(await pm.sweepProcessTimeouts()).toEqual({ delivered: 1, failed: 0 });
    expect(await pm.find(id)).toMatchObject({ status: 'COMPLETED', currentState: 'Rang' });
    expect((await pm.history(id)).transitions.at(-1)).toMatchObject({
      messageId: second!.id,
      outcome: 'applied',
      from: 'Waiting',
      to: 'Rang',
    });
  });

  it('a message that keeps the instance in its state does not start a new visit: the armed timeout still fires', async () => {
    const clock = new TestClock(new Date('2026-03-01T10:00:00.000Z'));
    const { pm } = processManagerOn(db, { processes: [alarm('alarm-touched')], clock });
    const key = newOrderId();
    const id = (await pm.deliver('alarm-touched', send('Arm', key))).instanceId!;
    clock.advance(1_000);
    expect((await pm.deliver('alarm-touched', send('Touch', key))).outcome).toBe('applied');
    expect((await pm.find(id))?.nextTimerDueAt).toEqual(new Date(clock.now().getTime() + fiveSeconds - 1_000));
    clock.advance(fiveSeconds);
    expect(await pm.sweepProcessTimeouts()).toEqual({ delivered: 1, failed: 0 });
    expect(await pm.find(id)).toMatchObject({ status: 'COMPLETED', currentState: 'Rang', state: { touched: 1 } });
  });

  it('a timeout that expects a state other than the one its transition enters is refused when armed', async () => {
    const bad = defineProcess({
      name: 'misarmed',
      states: ['Open', 'Waiting', 'Done'],
      initial: 'Open',
      final: ['Done'],
      data: z.object({ key: z.string() }),
      initialData: (key) => ({ key }),
      messages: { Go: z.object({ key: z.string() }) },
      correlate: (m) => m.payload.key,
      timeouts: { Late: { afterMs: 1_000, expects: 'Waiting' } },
      // Armed on entering Open: it could never belong to a visit of Waiting.
      on: { Go: [{ from: 'Open', to: 'Open', then: () => ({ schedule: [{ name: 'Late' }] }) }], Late: [] },
    });
    const { pm } = processManagerOn(db, { processes: [bad] });
    const key = newOrderId();
    await expect(
      pm.deliver('misarmed', { id: newMessageId('go'), type: 'Go', payload: { key } }),
    ).rejects.toMatchObject({ code: 'invalid_definition' });
    expect(await db.prisma.sagaInstance.count({ where: { process_name: 'misarmed' } })).toBe(0);
    expect(() =>
      defineProcess({
        name: 'misarmed-static',
        states: ['Open', 'Waiting', 'Done'],
        initial: 'Open',
        final: ['Done'],
        data: z.object({ key: z.string() }),
        initialData: (key) => ({ key }),
        messages: { Go: z.object({ key: z.string() }) },
        correlate: (m) => m.payload.key,
        timeouts: { Late: { afterMs: 1_000, expects: 'Waiting' } },
        on: { Go: [{ from: 'Open', to: 'Open', schedule: ['Late'] }] },
      }),
    ).toThrow(/Late.*expects "Waiting"/);
  });
});
