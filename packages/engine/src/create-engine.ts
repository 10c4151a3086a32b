import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { pino, type Logger } from 'pino';
import type { Database } from './db/database.ts';
import type { ActionDefinition, Json } from './definitions/define-action.ts';
import type { FlowDefinition } from './definitions/define-flow.ts';
import { EngineError } from './errors/engine-error.ts';
import { parseEngineConfig, type EngineConfig, type EngineConfigInput } from './runtime/engine-config.ts';
import { buildRegistry } from './runtime/registry.ts';
import type { RuntimeDeps } from './runtime/runtime-deps.ts';
import { toActionView, toFlowEventView, toRunView, type RunDetail, type RunView } from './runtime/run-view.ts';
import { appendFlowEvent } from './store/append-flow-event.ts';
import { enqueueJob } from './store/enqueue-job.ts';
import { findRun } from './store/find-run.ts';
import { insertAnomaly, type Anomaly } from './store/insert-anomaly.ts';
import { insertFlowRun } from './store/insert-flow-run.ts';
import { listActionRuns } from './store/list-action-runs.ts';
import { listFlowEvents } from './store/list-flow-events.ts';
import { listRuns, type ListRunsFilter } from './store/list-runs.ts';
import { startWorkerPool, type WorkerPool } from './worker/worker-pool.ts';

export interface EngineOptions {
  db: Database;
  flows: readonly FlowDefinition<never, Json>[];
  actions: readonly ActionDefinition<never, Json>[];
  config?: EngineConfigInput;
  logger?: Logger;
}

export interface StartFlowOptions {
  /** A business identity; starting a second run of the same flow with it is rejected. */
  businessKey?: string;
  tags?: string[];
}

export interface Engine {
  readonly config: EngineConfig;
  startFlow<I extends Json>(
    flow: FlowDefinition<I, Json> | string,
    input: I,
    options?: StartFlowOptions,
  ): Promise<{ runId: string }>;
  getRun(runId: string): Promise<RunDetail | null>;
  listRuns(filter: ListRunsFilter): Promise<RunView[]>;
  /** Starts this process's worker pool (idempotent). */
  startWorkers(): void;
  /** Stops the pool, draining in-flight work for at most `drainMs`. */
  stopWorkers(drainMs?: number): Promise<{ drained: boolean }>;
}

/**
 * Builds an engine over a database handle the host created. It reads no environment and holds no
 * global state, so several engines (tests, tenants) can live in one process.
 *
 * @example
 * const engine = createEngine({ db, flows: [fulfil], actions: [chargeCard] });
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

  const journal = async (anomaly: Anomaly) => {
    const level = config.logging.anomaly_level;
    if (level) logger[level]({ anomaly: anomaly.code, ...anomaly }, anomaly.message);
    try {
      await insertAnomaly(prisma, anomaly);
    } catch (err) {
      logger.error({ err, anomaly: anomaly.code }, 'could not journal an anomaly');
    }
  };
  const deps: RuntimeDeps = {
    prisma,
    registry,
    config,
    logger,
    workerId: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    journal,
    nudge: () => pool?.nudge(),
  };

  return {
    config,
    async startFlow(flowOrName, input, opts = {}) {
      const name = typeof flowOrName === 'string' ? flowOrName : flowOrName.name;
      const flow = registry.flows.get(name);
      if (!flow) throw new EngineError('unknown_flow', `no flow named "${name}" is registered`);
      let runId: string;
      try {
        runId = await prisma.$transaction(async (tx) => {
          const id = await insertFlowRun(tx, {
            flowName: flow.name,
            flowVersion: flow.version,
            input,
            businessKey: opts.businessKey ?? null,
            tags: opts.tags ?? [],
          });
          await appendFlowEvent(tx, {
            runId: id,
            type: 'run.started',
            data: { flow: flow.name, version: flow.version },
          });
          await enqueueJob(tx, { kind: 'wake-run', runId: id });
          return id;
        });
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw new EngineError(
            'duplicate_business_key',
            `a run of "${name}" with business key "${opts.businessKey ?? ''}" already exists`,
            { cause: err },
          );
        }
        throw err;
      }
      deps.nudge();
      return { runId };
    },
    async getRun(runId) {
      const run = await findRun(prisma, runId);
      if (!run) return null;
      const [actions, events] = await Promise.all([listActionRuns(prisma, runId), listFlowEvents(prisma, runId)]);
      return { run: toRunView(run), actions: actions.map(toActionView), events: events.map(toFlowEventView) };
    },
    async listRuns(filter) {
      return (await listRuns(prisma, filter)).map(toRunView);
    },
    startWorkers() {
      pool ??= startWorkerPool(deps);
    },
    async stopWorkers(drainMs) {
      const p = pool;
      pool = null;
      return p ? p.stop(drainMs) : { drained: true };
    },
  };
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e.code === 'P2002' || /unique constraint|duplicate key/i.test(e.message ?? '');
}
