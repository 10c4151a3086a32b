import { createDatabase as openEngineDatabase, migrate } from '@sagaflow/engine';
import { createDatabase } from '@sagaflow/test-postgres';

/** The tables whose `run_id` references flow_runs (migration 0001), each constraint named `<table>_run_id_fkey`. */
const runChildTables = ['action_runs', 'compensation_runs', 'flow_events', 'signals', 'timers'] as const;

export interface TemplateOptions {
  /**
   * Drop the foreign keys from the run's child tables to flow_runs after migrating: a bench-only
   * switch to measure what their checks cost the hot path (ADR 0068). The engine's schema keeps them.
   */
  withoutRunForeignKeys?: boolean;
}

/**
 * Creates database `name` with the engine's migrations applied, for each measured phase to clone:
 * every phase then starts on an identical, empty schema with no history of its own in the stats views.
 */
export async function prepareTemplateDatabase(
  adminUrl: string,
  name: string,
  options: TemplateOptions = {},
): Promise<void> {
  const url = await createDatabase(adminUrl, name);
  const db = await openEngineDatabase({ kind: 'postgres', url, poolSize: 2 });
  try {
    await migrate(db);
    if (options.withoutRunForeignKeys === true)
      await db.driver.exec(
        runChildTables.map((t) => `alter table "sagaflow"."${t}" drop constraint "${t}_run_id_fkey";`).join('\n'),
      );
  } finally {
    await db.close();
  }
}
