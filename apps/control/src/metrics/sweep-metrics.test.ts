import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from './create-metrics-registry.ts';
import type { MetricsSnapshot } from './read-metrics-snapshot.ts';

const empty: MetricsSnapshot = {
  at: new Date(),
  runs: { at: new Date(), counts: [] },
  stuck: [],
  steps: [],
  stepsUntil: new Date(),
  anomalies: [],
  instances: [],
  failing: [],
  transitions: [],
  repairs: [],
  approvalsPending: 0,
  outbox: { pending: 0, dead: 0, oldestPendingAgeSeconds: 0 },
  retention: [],
};

describe('sweep progress on /metrics', () => {
  it('each sweep shows rows handled, rows left and its rate; a sweep that has not counted its rows left shows none', async () => {
    const registry = createMetricsRegistry({
      processMetrics: false,
      sweeps: () => [
        { sweep: 'expired_steps', rowsTotal: 100_000, rowsLeft: 0, rowsPerSecond: 9000, lastPassAt: new Date() },
        { sweep: 'expired_runs', rowsTotal: 3, rowsLeft: null, rowsPerSecond: 2, lastPassAt: new Date() },
      ],
    });
    const text = await registry.render(empty);
    expect(text).toContain('sagaflow_sweep_rows_total{sweep="expired_steps"} 100000');
    expect(text).toContain('sagaflow_sweep_rows_left{sweep="expired_steps"} 0');
    expect(text).toContain('sagaflow_sweep_rows_per_second{sweep="expired_steps"} 9000');
    expect(text).toContain('sagaflow_sweep_rows_total{sweep="expired_runs"} 3');
    expect(text).not.toContain('sagaflow_sweep_rows_left{sweep="expired_runs"}');
  });
});
