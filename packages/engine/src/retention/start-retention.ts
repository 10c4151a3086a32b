import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { acquireLease, releaseLease } from '../store/acquire-lease.ts';
import { startLoop, type Loop } from '../worker/start-loop.ts';
import { resolvePruneOptions } from './prune-options.ts';
import { pruneRetention } from './prune-retention.ts';

/**
 * Retention on a schedule (`retention.enabled`): every `interval_seconds` the replica that holds
 * the `retention` lease (database clock) prunes with the configured age and batch size, renewing the
 * lease before every batch, so two replicas never walk the same rows at once (SKIP LOCKED would keep
 * them correct, the lease keeps them from doubling the work). Stopping lets the batch in flight finish.
 */
export function startRetention(deps: RuntimeDeps): Loop {
  const settings = deps.config.retention;
  const options = resolvePruneOptions(undefined, settings);
  const ttlSeconds = Math.max(60, Math.ceil(settings.transaction_timeout_ms / 1000) * 2);
  const holder = `${deps.workerId}:retention`;
  const keep = async () => (await acquireLease(deps.prisma, { name: 'retention', holder, ttlSeconds })).held;
  return startLoop({
    intervalMs: settings.interval_seconds * 1000,
    pass: async () => {
      if (!(await keep())) return;
      try {
        await pruneRetention(deps, options, { keep });
      } finally {
        await releaseLease(deps.prisma, { name: 'retention', holder }).catch(() => undefined);
      }
    },
    onError: (err) => deps.logger.warn({ err }, 'retention prune failed; it will try again at the next interval'),
  });
}
