import type { Database } from '../../../src/db/database.ts';
import { waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Gives `rootId` a chain of `depth` open 'propagate' descendants (parked, as a recursive flow leaves them:
 * each run awaiting one child of its own), one insert per level, and answers their ids, shallowest first.
 */
export async function seedOpenChain(db: Database, rootId: string, depth: number): Promise<string[]> {
  const [row] = await db.prisma.$queryRaw<{ ids: string[] }[]>`
    with recursive chain (n, id, parent) as (
      select 1, gen_random_uuid(), ${rootId}::uuid
      union all
      select n + 1, gen_random_uuid(), id from chain where n < ${depth}::int
    ), ins as (
      insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
      select id, ${waiter.name}, 1, 'Waiting', '{}'::jsonb, parent, 100, 'propagate' from chain
      returning id
    )
    select array_agg(id::text order by n) as ids from chain`;
  return row!.ids;
}
