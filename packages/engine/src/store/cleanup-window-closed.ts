import type { RawDb } from '../db/raw-db.ts';
import { openRunByKey } from './keyed-status.ts';

/** Whether the run is open with its cleanup window closed at `now` (a terminate's fence, or its window's end). */
export async function cleanupWindowClosed(db: RawDb, runId: string, now: Date): Promise<boolean> {
  const rows = await db.$queryRaw<{ closed: boolean }[]>`
    select true as closed from "sagaflow"."flow_runs" r
     where r.id = ${runId}::uuid and r.cancel_deadline_at <= ${now}::timestamptz and ${openRunByKey('r.status')}`;
  return rows.length > 0;
}
