import { setTimeout as sleep } from 'node:timers/promises';
import { sweepDoctor } from '../api/sweep-doctor.ts';
import { sweepExpiredRuns } from '../api/sweep-expired-runs.ts';
import { sweepExpiredSteps } from '../api/sweep-expired-steps.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { acquireLease, releaseLease } from '../store/acquire-lease.ts';

export interface Monitor {
  stop(): Promise<void>;
}

/**
 * The expiration monitor as a loop: every `intervalMs`, the replica that holds the `monitor` lease
 * (on the database clock) sweeps overdue steps and runs. Any number of replicas may run it; one sweeps.
 */
export function startMonitor(deps: RuntimeDeps, opts: { intervalMs: number }): Monitor {
  const ttlSeconds = Math.max(10, Math.ceil((opts.intervalMs * 3) / 1000));
  let running = true;
  const stopSignal = new AbortController();
  const loop = async () => {
    while (running) {
      try {
        const lease = await acquireLease(deps.prisma, { name: 'monitor', holder: deps.workerId, ttlSeconds });
        if (lease.held) {
          const { expired } = await sweepExpiredSteps(deps);
          if (expired > 0) deps.logger.info({ expired }, 'monitor expired overdue steps');
          const runs = await sweepExpiredRuns(deps);
          if (runs.expired.length > 0 || runs.failed.length > 0)
            deps.logger.info(
              { expired: runs.expired.length, failed: runs.failed.length },
              'monitor swept overdue runs',
            );
          if (deps.config.repair.enabled) {
            const { redispatched } = await sweepDoctor(deps);
            if (redispatched.length > 0) deps.logger.info({ redispatched }, 'doctor re-dispatched lost work');
          }
        }
      } catch (err) {
        deps.logger.warn({ err }, 'monitor sweep failed; it will try again');
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
      await releaseLease(deps.prisma, { name: 'monitor', holder: deps.workerId }).catch(() => undefined);
    },
  };
}
