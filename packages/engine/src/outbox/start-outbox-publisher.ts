import { countDueOutbox } from '../store/count-due-outbox.ts';
import { resolveOutboxPublisher, type OutboxPublisherOptions } from './outbox-publisher-options.ts';
import { startLoop } from '../worker/start-loop.ts';
import { createPublishedMarker, publishWith } from './publish-outbox-batch.ts';

export interface OutboxPublisher {
  /** Finishes the pass in flight and waits for the deliveries still out (each ends within publish_timeout_ms), then stops. */
  stop(): Promise<void>;
}

/**
 * The outbox publisher as a loop: a pass every `outbox.poll_interval_ms`. A pass publishes batch
 * after batch while they come back full, for at most `outbox.pass_budget_ms`, then reports its
 * progress (rows done, rows left, rate; ADR 0026) and, with rows left, starts the next pass at once:
 * a backlog drains without a fixed cap. Any number of replicas may run it: claims use SKIP LOCKED
 * and per-source advisory locks, so no two publishers send the same row within a claim window.
 *
 * @example
 * const publisher = startOutboxPublisher({ db, routes, config: { max_attempts: 8 } });
 * // on shutdown:
 * await publisher.stop();
 */
export function startOutboxPublisher(options: OutboxPublisherOptions): OutboxPublisher {
  const deps = resolveOutboxPublisher(options);
  const marker = createPublishedMarker(deps);
  // Sources a pass left still publishing (a slow or hung consumer): their rows count against the
  // batch size of the passes after it, so what one publisher has out stays within one batch.
  const out = new Set<Promise<void>>();
  let rowsOut = 0;
  let stopping = false;
  const loop = startLoop({
    intervalMs: deps.config.poll_interval_ms,
    pass: async () => {
      const pass = deps.progress.start('outbox', { budgetMs: deps.config.pass_budget_ms, logger: deps.logger });
      let full = true;
      while (full && !stopping && !pass.outOfTime()) {
        const limit = deps.config.batch_size - rowsOut;
        if (limit <= 0) break;
        const { result, outstanding, stillOut } = await publishWith(deps, marker, {
          limit,
          detachAfterMs: deps.config.poll_interval_ms,
        });
        if (stillOut > 0) {
          rowsOut += stillOut;
          const settled = outstanding.then(() => {
            rowsOut -= stillOut;
            out.delete(settled);
          });
          out.add(settled);
        }
        pass.add(result.published + result.dead);
        full = result.claimed >= limit;
      }
      const left = full ? await countDueOutbox(deps.prisma, { now: deps.clock.now() }) : 0;
      pass.end(left);
      return left > 0 && rowsOut < deps.config.batch_size;
    },
    onError: (err) => deps.logger.warn({ err }, 'outbox pass failed; it will try again'),
  });
  return {
    async stop() {
      stopping = true;
      await loop.stop();
      // What is still out ends within publish_timeout_ms (a publish past it is a recorded failure).
      await Promise.all(out);
    },
  };
}
