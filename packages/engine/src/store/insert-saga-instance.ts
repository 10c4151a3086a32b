import type { Db } from './types.ts';

/**
 * Creates the instance for a correlation key unless it exists. A concurrent creator waits on the
 * unique index and then does nothing, so both go on to lock the one row.
 */
export async function insertSagaInstance(
  db: Db,
  args: { processName: string; key: string; state: string; data: unknown; now: Date },
): Promise<void> {
  await db.$executeRaw`
    insert into "sagaflow"."saga_instances" (process_name, correlation_key, current_state, state, created_at, updated_at)
    values (${args.processName}, ${args.key}, ${args.state}, ${JSON.stringify(args.data ?? null)}::jsonb,
            ${args.now}::timestamptz, ${args.now}::timestamptz)
    on conflict (process_name, correlation_key) do nothing`;
}
