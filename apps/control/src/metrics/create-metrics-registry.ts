import { anomalyCodes, type SweepFigures } from '@sagaflow/engine';
import { collectDefaultMetrics, Counter, Gauge, Registry, type Metric } from 'prom-client';
import type { MetricsSnapshot } from './read-metrics-snapshot.ts';
import { createStepDurationHistogram, type StepDurationHistogram } from './step-duration-histogram.ts';

export interface MetricsRegistry {
  readonly registry: Registry;
  /** The step-duration histogram, for reading its next window (see readMetricsSnapshot). */
  readonly steps: StepDurationHistogram;
  /** Renders the Prometheus text of one snapshot. Callers must not overlap (see serveMetrics). */
  render(snapshot: MetricsSnapshot): Promise<string>;
}

/**
 * Sagaflow's metrics on a registry of their own (never prom-client's global one: several control
 * planes may share a process in tests). Every Sagaflow series is set by its collect() from the
 * snapshot being rendered, and reset first, so a series that vanished from the tables vanishes here.
 * Counters are table counts too: they survive restarts and agree across replicas.
 */
export function createMetricsRegistry(
  options: {
    processMetrics?: boolean;
    startedAt?: Date;
    /** This process's sweep progress (ADR 0026): the one set of figures not read from the tables. */
    sweeps?: () => SweepFigures[];
  } = {},
): MetricsRegistry {
  const registry = new Registry();
  const steps = createStepDurationHistogram(options.startedAt ?? new Date());
  let current: MetricsSnapshot | null = null;
  const snapshot = (): MetricsSnapshot => {
    if (!current) throw new Error('a metric was collected outside render(); use render(snapshot)');
    return current;
  };
  const registers = [registry];

  new Gauge({
    name: 'sagaflow_runs',
    help: 'Flow runs by flow and status (terminal statuses included).',
    labelNames: ['flow', 'status'] as const,
    registers,
    collect() {
      this.reset();
      for (const r of snapshot().runs.counts) this.set({ flow: r.flow, status: r.status }, r.count);
    },
  });
  new Gauge({
    name: 'sagaflow_runs_counted_seconds_ago',
    help: 'How old sagaflow_runs is: the runs are counted at most every SAGAFLOW_METRICS_RUN_COUNTS_MAX_AGE_MS (a read of every run).',
    registers,
    collect() {
      const s = snapshot();
      this.set(Math.max(0, (s.at.getTime() - s.runs.at.getTime()) / 1000));
    },
  });
  new Gauge({
    name: 'sagaflow_stuck_runs',
    help: 'Open runs that cannot move without an operator, by kind of stuck reason.',
    labelNames: ['reason'] as const,
    registers,
    collect() {
      this.reset();
      for (const r of snapshot().stuck) this.set({ reason: r.reason }, r.count);
    },
  });
  registry.registerMetric(steps.metric as unknown as Metric);
  new Counter({
    name: 'sagaflow_anomalies_total',
    help: 'Anomalies journaled (races and engine faults), by code; every code is reported, 0 included.',
    labelNames: ['code'] as const,
    registers,
    collect() {
      this.reset();
      for (const code of anomalyCodes) this.inc({ code }, 0);
      for (const a of snapshot().anomalies) this.inc({ code: a.code }, a.count);
    },
  });
  new Gauge({
    name: 'sagaflow_process_instances',
    help: 'Open process instances (ACTIVE or QUARANTINED) by process, current state and status.',
    labelNames: ['process', 'state', 'status'] as const,
    registers,
    collect() {
      this.reset();
      for (const i of snapshot().instances) this.set({ process: i.process, state: i.state, status: i.status }, i.count);
    },
  });
  new Gauge({
    name: 'sagaflow_process_oldest_seconds',
    help: 'Seconds since the stalest open instance in this process, state and status was last updated.',
    labelNames: ['process', 'state', 'status'] as const,
    registers,
    collect() {
      this.reset();
      const { at, instances } = snapshot();
      for (const i of instances)
        this.set(
          { process: i.process, state: i.state, status: i.status },
          Math.max(0, (at.getTime() - i.stalestUpdatedAt.getTime()) / 1000),
        );
    },
  });
  new Gauge({
    name: 'sagaflow_process_instances_failing',
    help: 'ACTIVE process instances that are failing (a failure record, or a timeout whose delivery keeps throwing), by process and state.',
    labelNames: ['process', 'state'] as const,
    registers,
    collect() {
      this.reset();
      for (const f of snapshot().failing) this.set({ process: f.process, state: f.state }, f.instances);
    },
  });
  new Gauge({
    name: 'sagaflow_process_timeouts_failing',
    help: 'Process timeouts whose delivery threw and that are still Pending (retried with backoff, never quarantining; ADR 0127), by process.',
    labelNames: ['process'] as const,
    registers,
    collect() {
      this.reset();
      const byProcess = new Map<string, number>();
      for (const f of snapshot().failing) byProcess.set(f.process, (byProcess.get(f.process) ?? 0) + f.timeouts);
      for (const [process, n] of byProcess) if (n > 0) this.set({ process }, n);
    },
  });
  new Counter({
    name: 'sagaflow_process_transitions_total',
    help: 'Process transitions made (applied messages and operator repairs), by process and from/to state.',
    labelNames: ['process', 'from', 'to'] as const,
    registers,
    collect() {
      this.reset();
      for (const t of snapshot().transitions) this.inc({ process: t.process, from: t.from, to: t.to }, t.count);
    },
  });
  new Gauge({
    name: 'sagaflow_outbox_pending',
    help: 'Outbox messages not yet published (due or waiting for a retry).',
    registers,
    collect() {
      this.set(snapshot().outbox.pending);
    },
  });
  new Gauge({
    name: 'sagaflow_outbox_dead',
    help: 'Outbox messages that used up their attempts and wait for an operator.',
    registers,
    collect() {
      this.set(snapshot().outbox.dead);
    },
  });
  new Gauge({
    name: 'sagaflow_outbox_oldest_seconds',
    help: 'Age of the oldest unpublished outbox message, in seconds; 0 when none.',
    registers,
    collect() {
      this.set(snapshot().outbox.oldestPendingAgeSeconds);
    },
  });
  new Gauge({
    name: 'sagaflow_retention_oldest_seconds',
    help: 'Age of the oldest finished run (table=flow_runs) and published outbox message (table=outbox) still stored, in seconds; 0 when none. Well above retention.older_than_seconds: pruning is off or behind.',
    labelNames: ['table'] as const,
    registers,
    collect() {
      this.reset();
      for (const r of snapshot().retention) this.set({ table: r.table }, r.seconds);
    },
  });
  new Counter({
    name: 'sagaflow_repairs_total',
    help: 'Operator repairs by command and outcome (no series until repairs are recorded).',
    labelNames: ['command', 'outcome'] as const,
    registers,
    collect() {
      this.reset();
      for (const r of snapshot().repairs) this.inc({ command: r.command, outcome: r.outcome }, r.count);
    },
  });
  new Gauge({
    name: 'sagaflow_repairs_awaiting_approval',
    help: 'Repair commands waiting for a second operator (pending, not expired).',
    registers,
    collect() {
      this.set(snapshot().approvalsPending);
    },
  });
  const sweeps = options.sweeps ?? (() => []);
  new Counter({
    name: 'sagaflow_sweep_rows_total',
    help: 'Rows the sweeps of this process handled since it started (expired, re-dispatched, delivered, published), by sweep.',
    labelNames: ['sweep'] as const,
    registers,
    collect() {
      this.reset();
      for (const f of sweeps()) this.inc({ sweep: f.sweep }, f.rowsTotal);
    },
  });
  new Gauge({
    name: 'sagaflow_sweep_rows_left',
    help: "Candidates a sweep's last pass in this process left for the next (0 = drained), by sweep.",
    labelNames: ['sweep'] as const,
    registers,
    collect() {
      this.reset();
      for (const f of sweeps()) if (f.rowsLeft !== null) this.set({ sweep: f.sweep }, f.rowsLeft);
    },
  });
  new Gauge({
    name: 'sagaflow_sweep_rows_per_second',
    help: 'Rows per second of the last pass of a sweep in this process that handled any, by sweep.',
    labelNames: ['sweep'] as const,
    registers,
    collect() {
      this.reset();
      for (const f of sweeps()) this.set({ sweep: f.sweep }, f.rowsPerSecond);
    },
  });
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });

  return {
    registry,
    steps,
    async render(s) {
      steps.add(s.steps, s.stepsUntil);
      current = s;
      try {
        return await registry.metrics();
      } finally {
        current = null;
      }
    },
  };
}
