import type { StepDurations } from './reads/read-step-durations.ts';
import { stepDurationBuckets } from './reads/read-step-durations.ts';

const name = 'sagaflow_step_duration_seconds';

export interface StepDurationHistogram {
  /** Steps that finished after this moment and are not counted yet. */
  readonly countedUntil: Date;
  /** Adds the steps that finished in (countedUntil, until]; call only after their read committed. */
  add(window: StepDurations[], until: Date): void;
  /** The metric object the registry renders. */
  readonly metric: {
    name: string;
    help: string;
    type: 'histogram';
    aggregator: 'sum';
    collect: () => void;
    get(): Promise<unknown>;
  };
}

/**
 * The step-duration histogram, counted from the table one window at a time: each scrape adds the
 * actions that finished since the last one (read through an index), so a scrape costs what happened
 * since, not the whole history. Like any process's histogram it starts at zero when the control plane
 * starts, and Prometheus's rate() treats the restart as a reset. It counts every worker's steps
 * (replicas, embedding services), because it reads the table, not this process's work.
 *
 * prom-client's Histogram can only observe() one value at a time, so the metric is an object of the
 * shape its Registry renders (`name`, `help`, `type`, `aggregator`, `get()`), as its own metrics are.
 */
export function createStepDurationHistogram(startedAt: Date): StepDurationHistogram {
  const series = new Map<string, StepDurations>();
  let countedUntil = startedAt;
  return {
    get countedUntil() {
      return countedUntil;
    },
    add(window, until) {
      for (const w of window) {
        const key = JSON.stringify([w.flow, w.action]);
        const s = series.get(key) ?? {
          flow: w.flow,
          action: w.action,
          count: 0,
          sum: 0,
          buckets: stepDurationBuckets.map(() => 0),
        };
        s.count += w.count;
        s.sum += w.sum;
        s.buckets = s.buckets.map((b, i) => b + (w.buckets[i] ?? 0));
        series.set(key, s);
      }
      if (until > countedUntil) countedUntil = until;
    },
    metric: {
      name,
      help: 'How long actions took from their first claim to their final outcome (Completed or Errored), retries included, by flow and action; counted since this control plane started.',
      type: 'histogram',
      aggregator: 'sum',
      collect: () => undefined,
      get() {
        const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
        for (const s of series.values()) {
          const labels = { flow: s.flow, action: s.action };
          stepDurationBuckets.forEach((le, i) =>
            values.push({ labels: { ...labels, le }, value: s.buckets[i] ?? 0, metricName: `${name}_bucket` }),
          );
          values.push({ labels: { ...labels, le: '+Inf' }, value: s.count, metricName: `${name}_bucket` });
          values.push({ labels, value: s.sum, metricName: `${name}_sum` });
          values.push({ labels, value: s.count, metricName: `${name}_count` });
        }
        return Promise.resolve({ name, help: this.help, type: this.type, aggregator: this.aggregator, values });
      },
    },
  };
}
