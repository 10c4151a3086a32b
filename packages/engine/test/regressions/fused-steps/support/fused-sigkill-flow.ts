import { defineAction, defineFlow } from '../../../../src/index.ts';

/**
 * The flow of sigkill-between-fused-steps.pg.test.ts, shared by the test and its child worker
 * process: three steps run back to back, each new one claimed by the statement that records the one
 * before (ADR 0042). Each process brings its own `middle` (same name): the child's never returns.
 */
export function fusedSigkillFlow(middle: () => Promise<string>, ran: string[] = []) {
  const step = (name: string, run: () => Promise<string>) =>
    defineAction({
      name,
      run: async () => {
        ran.push(name);
        return run();
      },
    });
  const first = step('fused-kill-first', async () => 'first');
  const second = step('fused-kill-middle', middle);
  const third = step('fused-kill-third', async () => 'third');
  const flow = defineFlow({
    name: 'fused-sigkill',
    version: 1,
    run: async (ctx) => [await ctx.action(first, null), await ctx.action(second, null), await ctx.action(third, null)],
  });
  return { flow, actions: [first, second, third] };
}

/**
 * Small windows so a killed worker's step and job come back within seconds: each step is reclaimable
 * a second after its claim, and the child's job lease is a second long.
 */
export const fusedSigkillConfig = {
  worker: { poll_interval_ms: 25, heartbeat_interval_ms: 100, dead_after_seconds: 2, lease_seconds: 1 },
  reclaim: { actions: { enabled: true, after_seconds: 1 } },
  logging: { anomaly_level: null },
} as const;

/**
 * The same windows with one slot per pool, for a test whose child holds a step until it is killed:
 * with more slots, the child's own pool claimed its job again once that one-second lease ran out and
 * reclaimed the step it was still running, so the test passed only if it killed the child within a
 * second, not on a loaded machine (ADR 0078). One slot: the pool holding the step claims nothing more.
 */
export const oneSlotFusedSigkillConfig = {
  ...fusedSigkillConfig,
  worker: { ...fusedSigkillConfig.worker, concurrency: 1 },
} as const;
