import { randomUUID } from 'node:crypto';
import type { Engine } from '@sagaflow/engine';
import type { Logger } from 'pino';
import { orderFlow } from './order-flow.ts';

/** Starts a demo order every `intervalMs`; returns a stop function. */
export function startDemoTraffic(engine: Engine, logger: Logger, intervalMs: number): () => void {
  const tick = () => {
    const orderId = randomUUID();
    engine
      .startFlow(
        orderFlow,
        { orderId, amount: Math.round(Math.random() * 20_000) / 100, failRate: 0.3 },
        { businessKey: orderId, tags: ['demo'] },
      )
      .catch((err: unknown) => logger.warn({ err }, 'demo traffic could not start a run'));
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  return () => clearInterval(timer);
}
