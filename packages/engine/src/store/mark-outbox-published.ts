import type { Db } from './types.ts';

/**
 * Records that the broker or handler acknowledged the row. Conditional on Pending only, not on the
 * claim's attempt: the message WAS delivered, whoever's claim it was. False = already Published
 * (a rival's duplicate got there first) or Dead.
 */
export async function markOutboxPublished(db: Db, args: { id: string; now: Date }): Promise<boolean> {
  const updated = await db.$executeRaw`
    update "sagaflow"."outbox"
       set status = 'Published', published_at = ${args.now}::timestamptz
     where id = ${args.id}::uuid and status = 'Pending'`;
  return updated === 1;
}
