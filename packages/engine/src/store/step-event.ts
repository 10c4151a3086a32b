import type { Json } from '../definitions/define-action.ts';
import { Prisma } from '../generated/prisma/client.ts';

/** A step transition's history row, written by the statement that makes the transition. */
export interface StepEvent {
  type: string;
  sequence: number;
  /** The event's data; the attempt is taken from the row the statement wrote. */
  data: Record<string, Json>;
}

/**
 * A CTE appending `event` for each row `source` (a data-modifying CTE returning id, run_id and
 * attempts) wrote: the event lands only when the transition did, without a statement of its own.
 * Empty when there is no event to write.
 */
export function stepEventCte(event: StepEvent | undefined, source: 'claimed' | 'upd'): Prisma.Sql {
  if (!event) return Prisma.empty;
  return Prisma.sql`, event as (
      insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data)
      ${stepEventRows(event, source)})`;
}

/**
 * The rows (run_id, type, sequence, row_id, data) of `event` for each row `source` wrote, as a
 * SELECT: for a statement that appends several transitions' events in one ordered insert.
 */
export function stepEventRows(event: StepEvent, source: string): Prisma.Sql {
  return Prisma.sql`select c.run_id, ${event.type}::text as type, ${event.sequence}::int as sequence, c.id as row_id,
             ${JSON.stringify(event.data)}::jsonb || jsonb_build_object('attempt', c.attempts) as data
        from ${Prisma.raw(source)} c`;
}
