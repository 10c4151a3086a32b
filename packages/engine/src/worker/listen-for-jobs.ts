import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import { jobChannel } from '../store/job-channel.ts';

export interface JobListener {
  /** Whether a LISTEN holds now: a job queued due now by any process will be heard. */
  listening(): boolean;
  /** Stops listening and closes the connection. */
  stop(): Promise<void>;
}

/** After a failed LISTEN, the next try waits this long, doubling up to {@link maxRetryMs}. */
const firstRetryMs = 100;
const maxRetryMs = 5_000;

/**
 * Keeps a LISTEN on the job channel for one worker pool (ADR 0038): a notification means a job due
 * now was queued (or given back) and committed by some process, and `onJob` wakes the pool's loop
 * at once instead of at its next poll. A notification sent while nobody listens is lost, so
 * `onListening` is called each time a LISTEN takes hold (the first and every one after a lost
 * connection): the pool polls once for whatever was queued meanwhile. A lost connection is logged and listened
 * for again at once, then with backoff; until then the pool's poll is the fallback.
 */
export function listenForJobs(
  listen: NonNullable<Database['listen']>,
  opts: { logger: Logger; onJob: () => void; onListening: () => void },
): JobListener {
  const { logger, onJob, onListening } = opts;
  let running = true;
  let closeCurrent: (() => Promise<void>) | null = null;
  let holding = false;
  const stopSignal = new AbortController();

  const loop = async () => {
    let retryMs = firstRetryMs;
    let reconnecting = false;
    while (running) {
      try {
        const subscription = await listen(jobChannel, () => onJob());
        if (!running) {
          await subscription.close();
          return;
        }
        closeCurrent = () => subscription.close();
        if (reconnecting) logger.info('job listener listening again; polling once for jobs queued while it was down');
        retryMs = firstRetryMs;
        holding = true;
        onListening();
        const why = await subscription.lost;
        holding = false;
        closeCurrent = null;
        if (!running) return;
        logger.warn({ err: why }, 'job listener lost its connection; listening again (the poll covers the gap)');
        reconnecting = true;
      } catch (err) {
        if (!running) return;
        logger.warn(
          { err, retryInMs: retryMs },
          'job listener could not listen; trying again (the poll covers the gap)',
        );
        reconnecting = true;
        await sleep(retryMs, undefined, { signal: stopSignal.signal }).catch(() => undefined);
        retryMs = Math.min(retryMs * 2, maxRetryMs);
      }
    }
  };
  const looping = loop();

  return {
    listening: () => holding && running,
    async stop() {
      running = false;
      stopSignal.abort();
      await closeCurrent?.();
      await looping;
    },
  };
}
