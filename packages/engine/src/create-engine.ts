import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { pino, type Logger } from 'pino';
import { cancelRun } from './api/cancel-run.ts';
import { inOperatorTransaction } from './api/operator-transaction.ts';
import { getRunDetail } from './api/get-run-detail.ts';
import { kickRun, type KickResult } from './api/kick-run.ts';
import { listRunViews } from './api/list-run-views.ts';
import { reclaimStep, type ReclaimResult } from './api/reclaim-step.ts';
import { signalRun } from './api/signal-run.ts';
import { startFlow, type StartFlowOptions } from './api/start-flow.ts';
import { releaseFirstStep } from './api/start-with-first-step.ts';
import { sweepDoctor, type DoctorPass } from './api/sweep-doctor.ts';
import { sweepExpiredRuns, type ExpiredRunsSweep } from './api/sweep-expired-runs.ts';
import { sweepExpiredSteps } from './api/sweep-expired-steps.ts';
import { terminateRun } from './api/terminate-run.ts';
import type { Database } from './db/database.ts';
import { withHostTransaction, type HostTransaction } from './db/host-transaction.ts';
import type { ActionDefinition, Json } from './definitions/define-action.ts';
import type { AnyFlowDefinition, FlowDefinition } from './definitions/flow-context.ts';
import type { Prisma, PrismaClient } from './generated/prisma/client.ts';
import { buildProcessManager, type ProcessManager } from './process/create-process-manager.ts';
import type { ProcessDefinition } from './process/define-process.ts';
import { createApprovals, type Approvals } from './approvals/create-approvals.ts';
import { createMaintenance, type Maintenance } from './maintenance/create-maintenance.ts';
import { createRepairs, type Repairs } from './repairs/create-repairs.ts';
import { createRetention, type Retention } from './retention/create-retention.ts';
import { systemClock, type Clock } from './runtime/clock.ts';
import { parseEngineConfig, type EngineConfig, type EngineConfigInput } from './runtime/engine-config.ts';
import { createEngineEvents, type EngineEvents } from './runtime/engine-events.ts';
import { HeldOutcomes } from './runtime/held-outcomes.ts';
import { buildRegistry } from './runtime/registry.ts';
import {
  describeAction,
  describeFlow,
  type ActionDescription,
  type FlowDescription,
} from './definitions/describe-definitions.ts';
import type { Faults, RuntimeDeps, TransactionalHooks } from './runtime/runtime-deps.ts';
import type { RunDetail, RunView } from './runtime/run-view.ts';
import { insertAnomaly, type Anomaly } from './store/insert-anomaly.ts';
import { createSweepProgress, type SweepProgress } from './sweeps/sweep-progress.ts';
import type { ListRunsFilter } from './store/list-runs.ts';
import { runMonitorPass, startMonitor, type Monitor, type MonitorPass } from './worker/start-monitor.ts';
import type { WorkerPoolCounters } from './worker/pool-counters.ts';
import { startWorkerPool, type WorkerPool } from './worker/worker-pool.ts';

export interface EngineOptions {
  db: Database;
  flows: readonly AnyFlowDefinition[];
  actions: readonly ActionDefinition<never, Json>[];
  /** Process managers (state machines reacting to messages); see `engine.processes`. */
  processes?: readonly ProcessDefinition[];
  config?: EngineConfigInput;
  logger?: Logger;
  /** Business time; the test kit passes a controllable one. */
  clock?: Clock;
  /** Code that must run inside the engine's own transactions (see TransactionalHooks). */
  hooks?: TransactionalHooks;
  /** @internal Test-kit fault injection. */
  faults?: Faults;
}

export interface Engine {
  readonly config: EngineConfig;
  /**
   * The registered flows and actions with the JSON Schemas of what they declared (ADR 0023), sorted
   * by name: what a console renders its start and complete-step forms from.
   */
  describeFlows(): FlowDescription[];
  describeActions(): ActionDescription[];
  readonly events: EngineEvents;
  /** The process managers registered with `processes`: deliver, timeouts, instances, repairs. */
  readonly processes: ProcessManager;
  /**
   * Typed, audited repairs of runs and process instances (ADR 0016): preview, apply (one transaction
   * under the target's lock, expected state checked, audit row), bulk, the catalogue.
   */
  readonly repairs: Repairs;
  /**
   * Two-person approvals (ADR 0020): submit a command under the stored policy (applied now, or
   * waiting for a second operator), approve, reject, list, and the policy itself.
   */
  readonly approvals: Approvals;
  /** Rows done, rows left and rate of this engine's sweeps (monitor, doctor, timeouts; ADR 0026), for /metrics. */
  readonly sweepProgress: SweepProgress;
  /** Retention (ADR 0027): prune finished runs, old transitions, published outbox rows, old inbox records and gone workers. */
  readonly retention: Retention;
  /**
   * Vacuum and analyze of the engine's tables on embedded PGlite (ADR 0050), whose autovacuum never
   * runs; nothing on PostgreSQL. Its loop runs while the worker pool does (`maintenance.enabled`).
   */
  readonly maintenance: Maintenance;
  /**
   * Starts a run. With `tx` (the host's open transaction: a pg client inside BEGIN, or a Prisma
   * interactive transaction on `db.pool`), the run is written in it: it exists if and only if the
   * host's transaction commits. With `audit`, the host's own row (an audit trail's "who started it")
   * is written by the callback in the same transaction as the run: both commit or neither does.
   */
  startFlow<I extends Json, In = I>(
    flow: FlowDefinition<I, Json, In> | string,
    input: NoInfer<In>,
    options?: StartFlowOptions & {
      tx?: HostTransaction;
      audit?: (tx: Prisma.TransactionClient, started: { runId: string }) => Promise<void>;
    },
  ): Promise<{ runId: string }>;
  /** Sends a signal (payload defaults to true); it waits in the run's buffer until awaited. */
  signal(runId: string, name: string, payload?: Json): Promise<{ signalId: string }>;
  /** Requests cooperative cancellation with a cleanup window for compensations. */
  cancel(runId: string, options: { reason: string; cleanupSeconds?: number }): Promise<{ requested: boolean }>;
  /** A fresh job for the step an open run is parked on; skips a Running step not yet stale. */
  kick(runId: string): Promise<KickResult>;
  /**
   * Reclaims a step Running with no reclaim deadline whose worker is gone (its heartbeat stopped,
   * ADR 0010): the next replay claims it again with the normal compare-and-swap (attempts + 1), so
   * a late outcome from the old owner is rejected. Without `stepId`, the run's first such step.
   * Refused (nothing written) while the owner is alive.
   */
  reclaimStep(runId: string, step?: { stepId?: string }): Promise<ReclaimResult>;
  /** One pass of the expiration monitor over steps whose business deadline passed. */
  sweepExpiredSteps(options?: { pageSize?: number; maxPages?: number }): Promise<{ expired: number }>;
  /**
   * One pass of the expiration monitor over runs whose business deadline passed: plans each
   * rollback by replay, expires the run and starts it; a run that cannot be planned is held off.
   */
  sweepExpiredRuns(options?: { pageSize?: number; maxPages?: number }): Promise<ExpiredRunsSweep>;
  /** One pass of the doctor (R1–R3), whatever `repair.enabled` says; the loop runs it only when enabled. */
  sweepDoctor(): Promise<{ redispatched: DoctorPass['redispatched'] }>;
  /**
   * One monitor pass under the replicas' lease (steps, runs, and the doctor when `doctor`): what the
   * loop does each interval, for a CLI or an operator. Skipped while another replica holds the lease.
   */
  monitorPass(options?: { doctor?: boolean; expiration?: boolean }): Promise<MonitorPass>;
  /** Runs the monitor loop in this process; among replicas, the lease holder sweeps (idempotent). */
  startMonitor(options?: { intervalMs?: number }): void;
  stopMonitor(): Promise<void>;
  /** Closes the run now, without cleanup. */
  terminate(runId: string, options: { reason: string }): Promise<{ terminated: boolean }>;
  getRun(runId: string): Promise<RunDetail | null>;
  listRuns(filter: ListRunsFilter): Promise<RunView[]>;
  /** Starts this process's worker pool (idempotent). */
  startWorkers(): void;
  /** Stops the pool, draining in-flight work for at most `drainMs`. */
  stopWorkers(drainMs?: number): Promise<{ drained: boolean }>;
  /** @internal For the bench and tests: what this process's worker pool did so far (null without one). */
  workerCounters(): WorkerPoolCounters | null;
  /** @internal For the test kit: the runtime this engine runs on. */
  readonly runtime: RuntimeDeps;
}

/**
 * Builds an engine over a database handle the host created. It reads no environment and holds no
 * global state, so several engines (tests, tenants, simulated workers) can live in one process.
 *
 * @example
 * const engine = createEngine({ db, flows: [fulfil], actions: [chargeCard, refundCard] });
 * engine.startWorkers();
 * const { runId } = await engine.startFlow(fulfil, { orderId: 'o-1' });
 */
export function createEngine(options: EngineOptions): Engine {
  const config = parseEngineConfig(options.config);
  const registry = buildRegistry(
    options.flows as unknown as FlowDefinition[],
    options.actions as unknown as ActionDefinition[],
  );
  const logger = options.logger ?? pino({ name: 'sagaflow' });
  const prisma = options.db.prisma;
  let pool: WorkerPool | null = null;
  /** Pools started so far: each after the first runs under a new worker id. */
  let poolsStarted = 0;
  let monitor: Monitor | null = null;

  const journal = async (anomaly: Anomaly) => {
    const level = config.logging.anomaly_level;
    if (level) logger[level]({ anomaly: anomaly.code, ...anomaly }, anomaly.message);
    try {
      await insertAnomaly(prisma, anomaly);
    } catch (err) {
      logger.error({ err, anomaly: anomaly.code }, 'could not journal an anomaly');
    }
  };
  const events = createEngineEvents(logger, journal);
  const deps: RuntimeDeps = {
    prisma,
    driver: options.db.driver,
    registry,
    config,
    logger,
    workerId: newWorkerId(),
    clock: options.clock ?? systemClock,
    journal,
    emit: events.emit,
    hooks: options.hooks ?? {},
    faults: options.faults ?? {},
    heldOutcomes: new HeldOutcomes(() => deps),
    progress: createSweepProgress(),
    startedActive: new Map(),
  };
  const nudge = () => pool?.nudge();
  const maintenance = createMaintenance(options.db, config.maintenance, logger);

  const processes = buildProcessManager({
    db: options.db,
    processes: options.processes ?? [],
    config: config.processes,
    limits: config.limits,
    clock: deps.clock,
    logger,
    sweeps: { config: config.sweeps, progress: deps.progress },
  });

  const repairs = createRepairs({ runtime: deps, process: processes.deps }, nudge);
  const approvals = createApprovals({ runtime: deps, process: processes.deps }, nudge);

  const sorted = <T extends { name: string }>(items: Iterable<T>) =>
    [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    config,
    describeFlows: () => sorted(registry.flows.values()).map(describeFlow),
    describeActions: () => sorted(registry.actions.values()).map(describeAction),
    processes,
    repairs,
    approvals,
    sweepProgress: deps.progress,
    retention: createRetention(deps),
    maintenance,
    events: events.emitter,
    runtime: deps,
    async startFlow(flow, raw, { tx, audit, ...opts } = {}) {
      const name = typeof flow === 'string' ? flow : flow.name;
      // What the caller passed (the schema's input type); the flow's schema checks it and fills its defaults.
      const input = raw as Json;
      if (tx) {
        // In the host's transaction the run exists only once the host commits: no hand-off to this
        // pool, a worker finds its wake after the commit.
        const started = await withHostTransaction(options.db, tx, async (host) => {
          const s = await startFlow({ ...deps, prisma: host, driver: undefined }, name, input, opts);
          await audit?.(host, { runId: s.runId });
          return s;
        });
        nudge();
        return { runId: started.runId };
      }
      // A start in a process whose pool has room runs the run here, from its first step, without a
      // poll: the pool keeps a slot for it while the start commits (ADR 0029).
      const p = pool;
      const reserved = p?.reserve() ?? false;
      // Without a slot the wake is queued due now: its NOTIFY comes back to this pool (ADR 0038 addendum).
      const queued = reserved ? null : p?.expectOwnNotification();
      // A start handed to the pool leases its wake (and claims its first step) under that pool's own
      // worker id, which is no longer the engine's once its workers were started again meanwhile: the
      // copy fixes it now, since the start reads its deps' id only later, after its input check.
      const own = reserved && p ? { ...deps, workerId: p.workerId } : deps;
      let started: Awaited<ReturnType<typeof startFlow>> | null = null;
      try {
        started = audit
          ? // The host's audit row commits with the run (ADR 0107): one operator transaction, off the
            // batched start; its wake is leased to this pool as any start's and adopted once it commits.
            await inOperatorTransaction(deps, async (t) => {
              const s = await startFlow(
                { ...own, prisma: t as PrismaClient, driver: undefined },
                name,
                input,
                opts,
                reserved,
              );
              await audit(t, { runId: s.runId });
              return s;
            })
          : await startFlow(own, name, input, opts, reserved);
        // A pool stopped meanwhile (no longer the engine's) gives the wake back: the step its start
        // claimed is opened first, so the next replay, here or elsewhere, can claim it (ADR 0048).
        if (reserved && pool !== p) await releaseFirstStep(own, started);
        if (started.job && started.loaded)
          deps.startedActive.set(started.job.id, { ...started.loaded, held: started.held ?? null });
      } finally {
        if (reserved) p?.adopt(started?.job ?? null);
        queued?.(started !== null);
        // The pool's replay took its run as it began (synchronously in adopt); one that did not (a pool
        // stopped meanwhile gave the job back) must not find it later: another worker may run it first.
        if (started?.job) deps.startedActive.delete(started.job.id);
        // Nor may the probe's replay go on: a no-op once the pool's replay has taken it (ADR 0097).
        started?.held?.drop();
      }
      if (!started.job) nudge();
      return { runId: started.runId };
    },
    async signal(runId, name, payload = true) {
      const sent = await signalRun(deps, runId, name, payload);
      nudge();
      return sent;
    },
    async cancel(runId, opts) {
      const r = await cancelRun(deps, runId, opts);
      nudge();
      return r;
    },
    async kick(runId) {
      const r = await kickRun(deps, runId);
      nudge();
      return r;
    },
    async reclaimStep(runId, step) {
      const r = await reclaimStep(deps, runId, step);
      nudge();
      return r;
    },
    async sweepExpiredSteps(opts) {
      const { expired } = await sweepExpiredSteps(deps, opts);
      if (expired > 0) nudge();
      return { expired };
    },
    async sweepExpiredRuns(opts) {
      const { expired, failed } = await sweepExpiredRuns(deps, opts);
      if (expired.length > 0) nudge();
      return { expired, failed };
    },
    async sweepDoctor() {
      const { redispatched } = await sweepDoctor(deps);
      if (redispatched.length > 0) nudge();
      return { redispatched };
    },
    async monitorPass(opts = {}) {
      const r = await runMonitorPass(deps, {
        doctor: opts.doctor ?? config.repair.enabled,
        ...(opts.expiration === undefined ? {} : { expiration: opts.expiration }),
        ttlSeconds: 60,
        holder: `${deps.workerId}:pass`,
        release: true,
      });
      if (r.swept) nudge();
      return r;
    },
    startMonitor(opts = {}) {
      monitor ??= startMonitor(deps, { intervalMs: opts.intervalMs ?? 5000 });
    },
    async stopMonitor() {
      const m = monitor;
      monitor = null;
      await m?.stop();
    },
    terminate: (runId, opts) => terminateRun(deps, runId, opts),
    getRun: (runId) => getRunDetail(prisma, runId),
    listRuns: (filter) => listRunViews(deps, filter),
    startWorkers() {
      if (!pool) {
        // A pool started again after a stop is a new worker, with an id of its own (ADR 0010's second
        // addendum): the row of the id it had says stopped, or stops beating, so what the last pool left
        // Running (an outcome let go at the stop, ADR 0129) is judged gone and can be reclaimed, and a
        // step this pool claims is never judged by the last pool's stop (review 55, review 56).
        if (poolsStarted > 0) deps.workerId = newWorkerId();
        poolsStarted += 1;
        pool = startWorkerPool(deps, { listen: options.db.listen?.bind(options.db) });
      }
      maintenance.start();
    },
    workerCounters: () => pool?.counters() ?? null,
    async stopWorkers(drainMs) {
      const p = pool;
      pool = null;
      // The pool stops claiming and refuses hand-offs before anything here awaits: a start that
      // reserved a slot then finds the pool stopped, not one that still runs what it adopts.
      const [stopped] = await Promise.all([
        p ? p.stop(drainMs, () => pool === null) : { drained: true },
        maintenance.stop(),
      ]);
      return stopped;
    },
  };
}

/** A worker id: the host, the process and a random part, so that every pool of every engine has its own. */
function newWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}
