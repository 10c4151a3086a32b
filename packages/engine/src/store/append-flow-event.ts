import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

/** Appends to a run's business history; callers do it in the transaction of the transition itself. Returns its id. */
export async function appendFlowEvent(
  db: Db,
  event: { runId: string; type: string; sequence?: number; rowId?: string; data?: Record<string, Json> },
): Promise<{ id: bigint }> {
  return db.flowEvent.create({
    select: { id: true },
    data: {
      run_id: event.runId,
      type: event.type,
      sequence: event.sequence ?? null,
      row_id: event.rowId ?? null,
      data: (event.data ?? {}) as never,
    },
  });
}
