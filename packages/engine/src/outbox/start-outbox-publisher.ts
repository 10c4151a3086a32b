import { resolveOutboxPublisher, type OutboxPublisherOptions } from './outbox-publisher-options.ts';
import { startLoop } from '../worker/start-loop.ts';
import { publishWith } from './publish-outbox-batch.ts';

export interface OutboxPublisher {
  /** Finishes the pass in flight, then stops. */
  stop(): Promise<void>;
}

/**
 * The outbox publisher as a loop: a pass every `outbox.poll_interval_ms`, or straight away while
 * passes come back full. Any number of replicas may run it: claims use SKIP LOCKED and per-source
 * advisory locks, so no two publishers send the same row within a claim window.
 *
 * @example
 * const publisher = startOutboxPublisher({ db, routes, config: { max_attempts: 8 } });
 * // on shutdown:
 * await publisher.stop();
 */
export function startOutboxPublisher(options: OutboxPublisherOptions): OutboxPublisher {
  const deps = resolveOutboxPublisher(options);
  return startLoop({
    intervalMs: deps.config.poll_interval_ms,
    pass: async () => (await publishWith(deps)).claimed >= deps.config.batch_size,
    onError: (err) => deps.logger.warn({ err }, 'outbox pass failed; it will try again'),
  });
}
