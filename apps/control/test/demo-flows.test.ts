import { createTestEngine, type TestEngine } from '@sagaflow/engine/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoActions, demoFlows } from '../src/demo/demo-flows.ts';
import { reservationFlow, reservationRunTimeoutSeconds } from '../src/demo/reservation-flow.ts';
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

  it('registers the order, trip and reservation flows, and every compensation they name', () => {
    expect(demoFlows.map((f) => [f.name, f.version])).toEqual([
      ['demo.order', 1],
      ['demo.trip', 1],
      ['demo.reservation', 1],
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
});
