import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import type { EngineConfig } from '../runtime/engine-config.ts';
import { startLoop, type Loop } from '../worker/start-loop.ts';
import { runMaintenancePass, type MaintenancePass } from './run-maintenance-pass.ts';

/** What this engine's embedded maintenance has done since it was built. */
export interface MaintenanceCounters {
  /** Passes finished (a pass that found nothing due counts). */
  passes: number;
  /** Tables vacuumed (each with its analyze), and tables analyzed alone. */
  vacuums: number;
  analyzes: number;
}

/**
 * `engine.maintenance` (ADR 0050): vacuum and analyze of the engine's tables on embedded PGlite,
 * where PostgreSQL runs single-user and its autovacuum never does. On a PostgreSQL server it does
 * nothing: the server's autovacuum owns its tables.
 */
export interface Maintenance {
  /** True on PGlite: the only database this maintenance serves. */
  readonly applies: boolean;
  /**
   * One pass now: every due table vacuumed or analyzed, one at a time. It waits for a pass already
   * in flight (the loop's) instead of running beside it. On PostgreSQL it returns an empty pass.
   *
   * @example
   * const { tables } = await engine.maintenance.pass();
   * for (const t of tables) console.log(`${t.command} ${t.table}: ${t.deadTuples} dead, ${t.ms} ms`);
   */
  pass(): Promise<MaintenancePass>;
  counters(): MaintenanceCounters;
  /**
   * Runs a pass every `maintenance.interval_ms`, the first one interval after the start, when the
   * database is PGlite and `maintenance.enabled`; otherwise nothing. Idempotent. `startWorkers` calls it.
   */
  start(): void;
  /** Stops the schedule; the table in flight finishes, the rest of its pass is left for the next start. */
  stop(): Promise<void>;
}

export function createMaintenance(
  db: Pick<Database, 'kind' | 'driver'>,
  config: EngineConfig['maintenance'],
  logger: Logger,
): Maintenance {
  const log = logger.child({ component: 'maintenance' });
  const applies = db.kind === 'pglite';
  const counters: MaintenanceCounters = { passes: 0, vacuums: 0, analyzes: 0 };
  let schedule: Loop | null = null;
  let stopping = false;
  // Passes run one after another, whoever asks: two VACUUMs of one table would only queue on PGlite.
  let previous: Promise<unknown> = Promise.resolve();
  const pass = (keepGoing: () => boolean = () => true): Promise<MaintenancePass> => {
    if (!applies) return Promise.resolve({ tables: [], interrupted: false });
    const next = previous.then(async () => {
      const done = await runMaintenancePass(db.driver, log, keepGoing);
      counters.passes += 1;
      for (const t of done.tables) counters[t.command === 'analyze' ? 'analyzes' : 'vacuums'] += 1;
      return done;
    });
    previous = next.catch(() => undefined);
    return next;
  };
  return {
    applies,
    pass: () => pass(),
    counters: () => ({ ...counters }),
    start() {
      if (!applies || !config.enabled || schedule) return;
      stopping = false;
      schedule = startLoop({
        intervalMs: config.interval_ms,
        firstAfterInterval: true,
        pass: async () => {
          await pass(() => !stopping);
        },
        onError: (err) => log.warn({ err }, 'embedded maintenance failed; it will try again at the next interval'),
      });
    },
    async stop() {
      const s = schedule;
      schedule = null;
      stopping = true;
      await s?.stop();
    },
  };
}
