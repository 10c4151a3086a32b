import type { Json } from '../definitions/define-action.ts';
import type { RawDb } from '../db/raw-db.ts';

/**
 * Appends to a run's business history; callers do it in the transaction of the transition itself.
 * Returns its id. The data goes in as the engine serialized it (no rounding of doubles, ADR 0037).
 */
export async function appendFlowEvent(
  db: RawDb,
  event: { runId: string; type: string; sequence?: number; rowId?: string; data?: Record<string, Json> },
): Promise<{ id: bigint }> {
  const [row] = await db.$queryRaw<{ id: bigint }[]>`
    insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data)
    values (${event.runId}::uuid, ${event.type}, ${event.sequence ?? null}::int, ${event.rowId ?? null}::uuid,
            ${JSON.stringify(event.data ?? {})}::jsonb)
    returning id`;
  if (!row) throw new Error(`the event ${event.type} of run ${event.runId} was not inserted`);
  return row;
}
