import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

export async function markProcessTimeoutDelivered(db: Db, args: { id: string; now: Date }): Promise<void> {
  await db.$executeRaw`
    update "sagaflow"."process_timeouts"
       set status = 'Delivered', delivered_at = ${args.now}::timestamptz, retry_at = null
     where id = ${args.id}::uuid and ${statusIn('status', ['Pending'])}`;
}
