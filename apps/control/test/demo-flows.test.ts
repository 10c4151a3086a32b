import { createTestEngine, type TestEngine } from '@sagaflow/engine/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoActions, demoFlows } from '../src/demo/demo-flows.ts';
import { festivalOrderFlow } from '../src/demo/festival-order-flow.ts';
import { reservationFlow, reservationRunTimeoutSeconds } from '../src/demo/reservation-flow.ts';
import { releaseWindowSeconds } from '../src/demo/ticket-flow.ts';
import { tripFlow } from '../src/demo/trip-flow.ts';

// The demo flows on the engine's test kit (in-memory PGlite, controllable clock).
describe('demo flows', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await createTestEngine({ flows: [...demoFlows], actions: [...demoActions] });
  }, 60_000);
  afterAll(async () => {
    await t.close();
  });

  it('registers the order, trip, reservation, festival order, ticket and pick-list flows, and every compensation they name', () => {
    expect(demoFlows.map((f) => [f.name, f.version])).toEqual([
      ['demo.order', 1],
      ['demo.trip', 1],
      ['demo.reservation', 1],
      ['demo.festival-order', 1],
      ['demo.ticket', 1],
      ['demo.pick-list', 1],
    ]);
    const names = demoActions.map((a) => a.name);
    for (const resource of ['flight', 'hotel', 'car']) {
      expect(names).toContain(`demo.book-${resource}`);
      expect(names).toContain(`demo.cancel-${resource}`);
    }
  });

  it('a trip whose car booking fails unwinds the hotel, then the flight, and ends Compensated', async () => {
    const d = await t.runToCompletion(tripFlow, { tripId: 'trip-car-fails', failAt: 'car' });
    expect(d.run.status).toBe('Compensated');
    expect(d.actions.map((a) => [a.name, a.status])).toEqual([
      ['demo.book-flight', 'Completed'],
      ['demo.book-hotel', 'Completed'],
      ['demo.book-car', 'Errored'],
    ]);
    // A forced failure is not retried.
    expect(d.actions[2]?.attempts).toBe(1);
    expect(d.compensations.map((c) => [c.name, c.status, c.input])).toEqual([
      ['demo.cancel-hotel', 'Completed', { bookingId: 'HT-TRIP-CAR' }],
      ['demo.cancel-flight', 'Completed', { bookingId: 'FL-TRIP-CAR' }],
    ]);
  });

  it('a trip whose flight booking fails has nothing to unwind and ends Failed', async () => {
    const d = await t.runToCompletion(tripFlow, { tripId: 'trip-flight-fails', failAt: 'flight' });
    expect(d.run.status).toBe('Failed');
    expect(d.compensations).toEqual([]);
  });

  it('a trip with no failure books all three and runs no compensation', async () => {
    const d = await t.runToCompletion(tripFlow, { tripId: 'trip-ok' });
    expect(d.run.status).toBe('Completed');
    expect(d.run.output).toEqual({ flightId: 'FL-TRIP-OK', hotelId: 'HT-TRIP-OK', carId: 'CR-TRIP-OK' });
    expect(d.compensations).toEqual([]);
  });

  it('a reservation nobody confirms is released after 30 s and completes with status expired', async () => {
    const d = await t.runToCompletion(
      reservationFlow,
      { orderId: 'res-expires' },
      { runTimeoutSeconds: reservationRunTimeoutSeconds },
    );
    expect(d.run.status).toBe('Completed');
    expect(d.run.output).toEqual({ status: 'expired' });
    expect(d.compensations.map((c) => [c.name, c.status])).toEqual([['demo.release-resource', 'Completed']]);
  });

  it('a reservation confirmed within the window is kept', async () => {
    const { runId } = await t.engine.startFlow(
      reservationFlow,
      { orderId: 'res-confirmed' },
      { runTimeoutSeconds: reservationRunTimeoutSeconds },
    );
    await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    t.clock.advance(5_000);
    await t.engine.signal(runId, 'confirm');
    const d = await t.drive(runId, { skipTime: false });
    expect(d.run.output).toEqual({ status: 'confirmed', reservationId: 'RSV-RES-CONF' });
    expect(d.compensations).toEqual([]);
  });

  /** The festival order's ticket child, once it waits for the box office. */
  async function waitingTicket(orderId: string): Promise<{ parentId: string; ticketId: string }> {
    const { runId: parentId } = await t.engine.startFlow(festivalOrderFlow, { orderId, amount: 80 });
    const parent = await t.drive(parentId, {
      skipTime: false,
      until: (d) => d.events.some((e) => e.type === 'child.started'),
    });
    const ticketId = String((parent.events.find((e) => e.type === 'child.started')?.data as { child: string }).child);
    await t.drive(ticketId, {
      skipTime: false,
      until: (d) => d.run.waitingFor?.startsWith('signal "issued"') ?? false,
    });
    return { parentId, ticketId };
  }

  it('a festival order charges, records when it was placed, gets its ticket from a child run, then packs and reserves side by side', async () => {
    const { parentId, ticketId } = await waitingTicket('fest-ok');
    await t.engine.signal(ticketId, 'issued');
    const d = await t.drive(parentId, { skipTime: false });
    expect(d.run.status).toBe('Completed');
    expect(d.actions.map((a) => [a.sequence, a.kind, a.name, a.parallelBlock])).toEqual([
      [1, 'action', 'demo.charge-card', null],
      [2, 'value', 'now', null],
      [3, 'child', 'demo.ticket', null],
      [4, 'action', 'demo.pack-merch', 4],
      [5, 'action', 'demo.reserve-stock', 4],
    ]);
    expect(d.run.output).toMatchObject({
      ticket: { status: 'issued', seatId: 'SEAT-FEST-OK' },
      parcelId: 'PCL-FEST-OK',
    });
  });

  it('a ticket hold cancelled while it waits waits for the box office to release the seat, then frees it and ends Cancelled', async () => {
    const { ticketId } = await waitingTicket('fest-cancel');
    await t.engine.cancel(ticketId, { reason: 'customer called to cancel' });
    const waiting = await t.drive(ticketId, {
      skipTime: false,
      until: (d) => d.run.waitingFor?.startsWith('signal "released"') ?? false,
    });
    expect(waiting.run.cancelRequestedAt).not.toBeNull();
    expect(waiting.compensations).toEqual([]);
    t.clock.advance(5_000);
    await t.engine.signal(ticketId, 'released');
    const d = await t.drive(ticketId, { skipTime: false });
    expect(d.run.status).toBe('Cancelled');
    expect(d.compensations.map((c) => [c.name, c.status])).toEqual([['demo.free-seat', 'Completed']]);
    // The seat is freed inside the default cleanup window (runs.cancel_cleanup_seconds, 300 s), not cut off by it.
    expect(releaseWindowSeconds).toBeLessThan(300);
  });
});
