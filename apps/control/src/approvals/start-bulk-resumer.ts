import type { Engine } from '@sagaflow/engine';
import type { Logger } from 'pino';

/**
 * On start and every `intervalMs`: approved bulk repairs whose approver stopped part-way (the
 * control plane was killed mid-bulk) are finished by `engine.approvals.resumeInterrupted()`, so an
 * approval never stays `applying` for good. Returns a stop that waits for a pass in flight.
 */
export function startBulkResumer(engine: Engine, logger: Logger, intervalMs = 60_000): () => Promise<void> {
  let running: Promise<void> = Promise.resolve();
  const pass = () => {
    running = running.then(async () => {
      try {
        const finished = await engine.approvals.resumeInterrupted();
        if (finished > 0) logger.info({ finished }, 'interrupted bulk repairs finished');
      } catch (err) {
        logger.error({ err }, 'finishing interrupted bulk repairs failed; the next pass tries again');
      }
    });
  };
  pass();
  const timer = setInterval(pass, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
