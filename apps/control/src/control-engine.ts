import { createDatabase, createEngine, type Database, type Engine } from '@sagaflow/engine';
import type { Logger } from 'pino';
import { demoActions, demoFlows, demoProcesses } from './demo/demo-flows.ts';
import type { ControlEnv } from './env.ts';

/** Opens the configured database; a failure names the setting to fix. */
export async function openDatabase(env: ControlEnv): Promise<Database> {
  const setting = env.DATABASE_URL ? 'DATABASE_URL' : 'SAGAFLOW_DATA_DIR';
  try {
    return env.DATABASE_URL
      ? await createDatabase({ kind: 'postgres', url: env.DATABASE_URL })
      : await createDatabase({ kind: 'pglite', dataDir: env.SAGAFLOW_DATA_DIR });
  } catch (err) {
    throw new Error(`${setting}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** The engine this control plane runs: its flows and actions, its config. The CLI builds the same one. */
export function createControlEngine(db: Database, env: ControlEnv, logger: Logger): Engine {
  return createEngine({
    db,
    flows: [...demoFlows],
    actions: [...demoActions],
    processes: [...demoProcesses],
    config: {
      // Demo traffic sends poison messages: quarantine them after 10 s of failing, unless configured.
      ...(env.SAGAFLOW_DEMO ? { processes: { quarantine_after_seconds: 10 } } : {}),
      ...env.engineConfig,
      worker: { concurrency: env.SAGAFLOW_WORKER_CONCURRENCY, ...env.engineConfig.worker },
      approvals: { expire_after_seconds: env.SAGAFLOW_APPROVAL_EXPIRE_SECONDS, ...env.engineConfig.approvals },
    },
    logger: logger.child({ component: 'engine' }),
  });
}
