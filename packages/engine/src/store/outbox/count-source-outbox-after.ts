import type { Db } from '../types.ts';

/** How many rows a source wrote after one of its rows (by `seq`), by status: what a requeued row meets. */
export async function countSourceOutboxAfter(
  db: Db,
  args: { sourceId: string; seq: bigint },
): Promise<{ published: number; pending: number }> {
  const rows = await db.$queryRaw<{ published: number; pending: number }[]>`
    select count(*) filter (where status = 'Published')::int as published,
           count(*) filter (where status = 'Pending')::int as pending
      from "sagaflow"."outbox"
     where source_id = ${args.sourceId} and seq > ${args.seq}`;
  return rows[0] ?? { published: 0, pending: 0 };
}
