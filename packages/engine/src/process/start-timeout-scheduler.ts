import { setTimeout as sleep } from 'node:timers/promises';
import type { ProcessDeps } from './process-deps.ts';
import { sweepProcessTimeouts } from './sweep-process-timeouts.ts';

export interface TimeoutScheduler {
  stop(): Promise<void>;
}

/**
 * The timeout scheduler as a loop: sweep until nothing is due, then wait `intervalMs`. Any number of
 * replicas may run it at once: claims skip each other's locked rows. Nothing sleeps until a deadline;
 * a deadline hours away is just a row whose due_at has not come.
 */
export function startTimeoutScheduler(deps: ProcessDeps, opts: { intervalMs: number }): TimeoutScheduler {
  let running = true;
  const stopSignal = new AbortController();
  const loop = async () => {
    while (running) {
      try {
        for (;;) {
          const { delivered, failed } = await sweepProcessTimeouts(deps);
          if (delivered + failed === 0 || !running) break;
        }
      } catch (err) {
        deps.logger.warn({ err }, 'timeout sweep failed; it will try again');
      }
      await sleep(opts.intervalMs, undefined, { signal: stopSignal.signal }).catch(() => undefined);
    }
  };
  const looping = loop();
  return {
    async stop() {
      running = false;
      stopSignal.abort();
      await looping;
    },
  };
}
