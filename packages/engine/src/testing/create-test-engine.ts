import { pino } from 'pino';
import { createEngine, type Engine, type EngineOptions } from '../create-engine.ts';
import { createDatabase } from '../db/create-database.ts';
import type { Database } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';
import type { Json } from '../definitions/define-action.ts';
import type { FlowDefinition } from '../definitions/flow-context.ts';
import type { StartFlowOptions } from '../api/start-flow.ts';
import type { RunDetail } from '../runtime/run-view.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { terminalRunStatuses } from '../store/types.ts';
import { FaultPlan } from './fault-plan.ts';
import { TestClock } from './test-clock.ts';

export interface TestEngine {
  engine: Engine;
  db: Database;
  clock: TestClock;
  faults: FaultPlan;
  /**
   * Starts a flow and drives it to a terminal state in-process. With `skipTime` (default true),
   * whenever the run is only waiting for time (a timer, a signal timeout, a retry), the clock jumps
   * to the next due wake instead of waiting for it.
   */
  runToCompletion<I extends Json, In = I>(
    flow: FlowDefinition<I, Json, In>,
    input: NoInfer<In>,
    options?: StartFlowOptions & { skipTime?: boolean; timeoutMs?: number },
  ): Promise<RunDetail>;
  /** Drives an already started run until `until` holds (default: terminal). */
  drive(
    runId: string,
    options?: { skipTime?: boolean; timeoutMs?: number; until?: (d: RunDetail) => boolean },
  ): Promise<RunDetail>;
  close(): Promise<void>;
}

/**
 * An engine on an in-memory PGlite (or the database you pass), with a controllable clock, fault
 * injection and quiet logs: the smallest honest way to test a flow.
 *
 * @example
 * const t = await createTestEngine({ flows: [booking], actions: [bookFlight, cancelFlight] });
 * const done = await t.runToCompletion(booking, { tripId: 't-1' });
 * expect(done.run.status).toBe('Completed');
 */
export async function createTestEngine(
  options: Omit<EngineOptions, 'db' | 'clock' | 'faults'> & { db?: Database; clock?: TestClock },
): Promise<TestEngine> {
  const ownsDb = !options.db;
  const db = options.db ?? (await createDatabase({ kind: 'pglite' }));
  if (ownsDb) await migrate(db);
  const clock = options.clock ?? new TestClock();
  const faults = new FaultPlan(db);
  const engine = createEngine({
    ...options,
    db,
    clock,
    faults: faults.faults,
    logger: options.logger ?? pino({ level: 'silent' }),
    config: {
      ...options.config,
      worker: { poll_interval_ms: 10, ...options.config?.worker },
      logging: { anomaly_level: null, ...options.config?.logging },
    },
  });

  const drive: TestEngine['drive'] = async (id, opts = {}) => {
    // Refused as the engine's API refuses it (invalid_input naming runId), not as a database error.
    const runId = assertUuid(id, 'runId');
    engine.startWorkers();
    const until = opts.until ?? ((d: RunDetail) => (terminalRunStatuses as readonly string[]).includes(d.run.status));
    const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
    let quietPolls = 0;
    /** One poll's pause; after three polls with no job due, the clock jumps to the next wake (`skipTime`). */
    const skipIdleTime = async () => {
      const due = await db.prisma.job.count({ where: { available_at: { lte: clock.now() } } });
      quietPolls = due === 0 ? quietPolls + 1 : 0;
      if ((opts.skipTime ?? true) && quietPolls >= 3) {
        const next = await db.prisma.job.findFirst({
          where: { available_at: { gt: clock.now() } },
          orderBy: { available_at: 'asc' },
        });
        if (next) clock.set(next.available_at);
        quietPolls = 0;
      }
      await new Promise((r) => setTimeout(r, 10));
    };
    // Without an `until` of its own the loop reads only the run's status until it is terminal: a run's
    // whole detail grows with its steps, and reading it at every poll made a long run's test quadratic.
    const wantsDetail = opts.until !== undefined;
    for (;;) {
      if (!wantsDetail && Date.now() <= deadline) {
        const row = await db.prisma.flowRun.findUnique({ where: { id: runId }, select: { status: true } });
        if (!row) throw new Error(`run ${runId} does not exist`);
        if (!(terminalRunStatuses as readonly string[]).includes(row.status)) {
          await skipIdleTime();
          continue;
        }
      }
      const detail = await engine.getRun(runId);
      if (!detail) throw new Error(`run ${runId} does not exist`);
      if (until(detail)) return detail;
      if (Date.now() > deadline)
        throw new Error(
          `run ${runId} did not get there in time; it is ${detail.run.status} (${detail.run.waitingFor ?? detail.run.stuckReason ?? 'no reason recorded'})`,
        );
      await skipIdleTime();
    }
  };

  return {
    engine,
    db,
    clock,
    faults,
    drive,
    async runToCompletion(flow, input, opts = {}) {
      const { skipTime, timeoutMs, ...start } = opts;
      const { runId } = await engine.startFlow(flow, input, start);
      return drive(runId, {
        ...(skipTime === undefined ? {} : { skipTime }),
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      });
    },
    async close() {
      await engine.stopWorkers();
      if (ownsDb) await db.close();
    },
  };
}
