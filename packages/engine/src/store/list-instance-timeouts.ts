import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

export interface DbInstanceTimeout {
  id: string;
  name: string;
  expected_state: string;
  due_at: Date;
  status: string;
  attempts: number;
  last_error: string | null;
  retry_at: Date | null;
}

/** An instance's timeouts not yet delivered or cancelled (what the scheduler will still fire), soonest first. */
export async function listInstanceTimeouts(db: Db, instanceId: string, limit: number): Promise<DbInstanceTimeout[]> {
  return db.$queryRaw<DbInstanceTimeout[]>`
    select id::text as id, name, expected_state, due_at, status, attempts, last_error, retry_at
      from "sagaflow"."process_timeouts"
     where instance_id = ${instanceId}::uuid and ${statusIn('status', ['Pending'])}
     order by due_at, id
     limit ${limit}`;
}
