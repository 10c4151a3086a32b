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
  /**
   * What becomes of a step's events (those naming a step row: `row_id` set), a bench-only switch to
   * bound what writing them costs the hot path (ADR 0072). `written` (the default): no change.
   * `dropped`: a BEFORE INSERT trigger on flow_events discards them, so the statements still build
   * them but nothing is stored, indexed or checked. `passed`: the same trigger keeps every row, the
   * arm that prices the trigger itself, so `passed` minus `dropped` is what storing them costs.
   */
  stepEvents?: StepEventsArm;
}

/** The A/B arms of {@link TemplateOptions.stepEvents}. */
export const stepEventsArms = ['written', 'dropped', 'passed'] as const;
export type StepEventsArm = (typeof stepEventsArms)[number];

/** The arm named by a bench's `--step-events` flag, or an error naming the flag and its values. */
export function parseStepEventsArm(value: string | undefined): StepEventsArm {
  const arm = value ?? 'written';
  if (!(stepEventsArms as readonly string[]).includes(arm))
    throw new Error(`--step-events must be one of ${stepEventsArms.join(', ')}, not "${arm}"`);
  return arm as StepEventsArm;
}

/** The trigger of an arm other than `written`: plpgsql's cheapest row trigger, one comparison per event. */
const stepEventsTrigger = (arm: Exclude<StepEventsArm, 'written'>) => `
  create function "sagaflow"."bench_step_events"() returns trigger language plpgsql as $$
  begin
    ${arm === 'dropped' ? 'if new.row_id is not null then return null; end if;' : ''}
    return new;
  end $$;
  create trigger bench_step_events before insert on "sagaflow"."flow_events"
    for each row execute function "sagaflow"."bench_step_events"();`;

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
    const stepEvents = options.stepEvents ?? 'written';
    if (stepEvents !== 'written') await db.driver.exec(stepEventsTrigger(stepEvents));
  } finally {
    await db.close();
  }
}
