import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';
import { travelSaga } from './support/travel.ts';

describe(`compensation, seed 001 (${testDbKind()})`, () => {
  const saga = travelSaga();
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: saga.flows, actions: saga.actions });
  });
  afterAll(async () => {
    await t.closeAll();
  });
  beforeEach(() => {
    saga.log.length = 0;
    saga.failing.clear();
  });
  const flow = (name: string) => saga.flows.find((f) => f.name === name) ?? saga.flows[0]!;

  it('a failure after two bookings unwinds them in reverse order, then the run is Compensated', async () => {
    saga.failing.add('book-car');
    const d = await t.runToCompletion(flow('booking'), { tripId: 't1' });
    expect(saga.log).toEqual([
      'book-flight',
      'book-hotel',
      'book-car',
      'cancel-hotel(book-hotel:t1)',
      'cancel-flight(book-flight:t1)',
    ]);
    expect(d.run.status).toBe('Compensated');
    expect(d.compensations.map((c) => [c.name, c.status, c.rollbackLevel])).toEqual([
      ['cancel-hotel', 'Completed', 1],
      ['cancel-flight', 'Completed', 1],
    ]);
    const types = d.events.map((e) => e.type);
    expect(types.filter((x) => x === 'compensation.started')).toHaveLength(1);
    expect(types.filter((x) => x === 'compensation.step_started')).toHaveLength(2);
  });

  it('a successful run never runs a compensation and records none', async () => {
    const d = await t.runToCompletion(flow('booking'), { tripId: 't2' });
    expect(d.run.status).toBe('Completed');
    expect(d.compensations).toEqual([]);
    expect(saga.log.some((l) => l.startsWith('cancel'))).toBe(false);
  });

  it('a compensation failure stops the rollback and propagates: the older compensation is skipped', async () => {
    saga.failing.add('book-car');
    saga.failing.add('cancel-hotel');
    const d = await t.runToCompletion(flow('booking'), { tripId: 't3' });
    expect(d.run.status).toBe('Failed');
    expect(d.run.error).toMatchObject({ code: 'compensation_failed' });
    expect(saga.log).not.toContain('cancel-flight(book-flight:t3)');
    // ADR 0124: the skipped compensation is closed Cancelled (it never ran), not left Pending on the
    // finished run, and the run states both steps as left undone.
    expect(d.compensations.map((c) => [c.name, c.status])).toEqual([
      ['cancel-hotel', 'Errored'],
      ['cancel-flight', 'Cancelled'],
    ]);
    expect(d.run.leftUndone?.steps.map((s) => [s.name, s.compensation])).toEqual([
      ['book-flight', 'cancel-flight'],
      ['book-hotel', 'cancel-hotel'],
    ]);
    expect(d.run.leftUndone?.compensation_failed?.name).toBe('cancel-hotel');
  });

  it('continue-with-error runs every compensation despite a failing one', async () => {
    saga.failing.add('book-car');
    saga.failing.add('cancel-hotel');
    const d = await t.runToCompletion(flow('booking-continue'), { tripId: 't4' });
    expect(saga.log).toContain('cancel-flight(book-flight:t4)');
    expect(d.compensations.map((c) => [c.name, c.status])).toEqual([
      ['cancel-hotel', 'Errored'],
      ['cancel-flight', 'Completed'],
    ]);
    // The flow rethrew its own error after compensate() returned.
    expect(d.run.error).toMatchObject({ code: 'action_failed' });
    // ADR 0124: the hotel was not cancelled; the run says so.
    expect(d.run.leftUndone?.steps.map((s) => [s.name, s.compensation])).toEqual([['book-hotel', 'cancel-hotel']]);
    expect(d.run.leftUndone?.compensation_failed?.name).toBe('cancel-hotel');
  });

  it('parallel compensation runs every compensation of the level', async () => {
    saga.failing.add('book-car');
    const d = await t.runToCompletion(flow('booking-parallel'), { tripId: 't5' });
    expect(d.run.status).toBe('Compensated');
    expect(new Set(saga.log.slice(3))).toEqual(
      new Set(['cancel-hotel(book-hotel:t5)', 'cancel-flight(book-flight:t5)']),
    );
    expect(d.compensations.every((c) => c.status === 'Completed')).toBe(true);
  });
});
