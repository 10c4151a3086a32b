import { startLoop, type Loop } from '../worker/start-loop.ts';
import type { ProcessDeps } from './process-deps.ts';
import { sweepProcessTimeouts } from './sweep-process-timeouts.ts';

export type TimeoutScheduler = Loop;

/**
 * The timeout scheduler as a loop: sweep until nothing is due, then wait `intervalMs`. Any number of
 * replicas may run it at once: claims skip each other's locked rows. Nothing sleeps until a deadline;
 * a deadline hours away is just a row whose due_at has not come.
 */
export function startTimeoutScheduler(deps: ProcessDeps, opts: { intervalMs: number }): TimeoutScheduler {
  return startLoop({
    intervalMs: opts.intervalMs,
    pass: async () => {
      return (await sweepProcessTimeouts(deps)).more;
    },
    onError: (err) => deps.logger.warn({ err }, 'timeout sweep failed; it will try again'),
  });
}
