import { randomUUID } from 'node:crypto';
import type { Engine } from '@sagaflow/engine';
import type { Logger } from 'pino';
import { orderFlow } from './order-flow.ts';
import { reservationFlow, reservationRunTimeoutSeconds } from './reservation-flow.ts';
import { tripFlow } from './trip-flow.ts';

/** Odds of each tick's run, and of a reservation being confirmed (the rest expire after 30 s). */
const mix = { order: 0.5, trip: 0.35 } as const;
const confirmOdds = 0.5;
const confirmDelayMs = { min: 2_000, max: 8_000 };
/** Per booking try: with two tries each, about a quarter of trips fail and most of those compensate. */
const tripFailRate = 0.3;

/**
 * Starts a demo run every `intervalMs`, mixing orders, travel bookings (some of which unwind) and
 * reservations (about half confirmed a few seconds later, the rest left to expire); returns a stop
 * function that also cancels the confirmations not yet sent.
 */
export function startDemoTraffic(engine: Engine, logger: Logger, intervalMs: number): () => void {
  const pendingConfirms = new Set<NodeJS.Timeout>();
  let stopped = false;
  const warn = (what: string) => (err: unknown) => logger.warn({ err }, `demo traffic could not ${what}`);

  const confirmLater = (runId: string) => {
    if (stopped) return;
    const delay = confirmDelayMs.min + Math.random() * (confirmDelayMs.max - confirmDelayMs.min);
    const timer = setTimeout(() => {
      pendingConfirms.delete(timer);
      engine.signal(runId, 'confirm').catch(warn('confirm a reservation'));
    }, delay);
    pendingConfirms.add(timer);
  };

  const tick = () => {
    const id = randomUUID();
    const roll = Math.random();
    if (roll < mix.order) {
      engine
        .startFlow(
          orderFlow,
          { orderId: id, amount: Math.round(Math.random() * 20_000) / 100, failRate: 0.3 },
          { businessKey: id, tags: ['demo'] },
        )
        .catch(warn('start an order'));
    } else if (roll < mix.order + mix.trip) {
      engine
        .startFlow(tripFlow, { tripId: id, failRate: tripFailRate }, { businessKey: id, tags: ['demo'] })
        .catch(warn('start a trip'));
    } else {
      engine
        .startFlow(
          reservationFlow,
          { orderId: id },
          { businessKey: id, tags: ['demo'], runTimeoutSeconds: reservationRunTimeoutSeconds },
        )
        .then(({ runId }) => {
          if (Math.random() < confirmOdds) confirmLater(runId);
        })
        .catch(warn('start a reservation'));
    }
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  return () => {
    stopped = true;
    clearInterval(timer);
    for (const t of pendingConfirms) clearTimeout(t);
    pendingConfirms.clear();
  };
}
