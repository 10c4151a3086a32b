import type { Database } from '../../src/db/database.ts';
import { waiter } from '../repairs/support/repair-fixtures.ts';

/**
 * Gives `parentId` `count` open child runs (parked, cancel policy propagate) in one statement, as a
 * fan-out of `ctx.child` calls leaves them: what the parent's expiry, or its end, must cancel.
 */
export async function seedOpenChildren(db: Database, parentId: string, count: number): Promise<void> {
  await db.prisma.$executeRaw`
    insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
    select ${waiter.name}, 1, 'Waiting', '{}'::jsonb, ${parentId}::uuid, 100 + g, 'propagate'
      from generate_series(1, ${count}::int) g`;
}
