import { heldRunShownForMs, openRunStatuses } from '@sagaflow/engine';
import type { SqlReader } from './sql-reader.ts';

/**
 * An open run the monitor journaled `run_held` lately (ADR 0137): another session holds its row, or a row of
 * it, so nothing can write a stuck reason on it. Shown as stuck with the kind `run_held` (ADR 0138).
 */
export interface HeldRun {
  runId: string;
  /** The sweep that last found it held: `expiry`, `owner_gone`, `stuck reasons`, `doctor`, ... */
  sweep: string;
  /** When that sweep first found it held in this episode (the engine's clock), as the entry says. */
  since: string | null;
  /** The newest `run_held` entry's time. */
  lastSeenAt: Date;
  /** How long it had been held at that entry. */
  heldSeconds: number | null;
  /** The reason the run carried before it was held, if any: left as it was, since nothing could change it. */
  stuckReason: string | null;
}

/** The most held runs one read lists; the counts are exact past it. */
export const heldRunsListed = 1000;

const shownForSeconds = heldRunShownForMs / 1000;

interface Row {
  runId: string;
  lastSeenAt: Date;
  details: unknown;
  stuckReason: string | null;
}

/**
 * The open runs the monitor found held within the last {@link heldRunShownForMs} and whose row nothing has
 * written since its newest entry (the row's `xmin` the entry recorded): a run let go and then moved on (the
 * expiry that waited for it, a repair) is not shown held any more. Each with its newest entry;
 * only `runIds` when given. At most `limit` (by run id), read from the `(code, at)` index: it costs the held
 * runs, never the history.
 */
export async function readHeldRuns(
  db: SqlReader,
  options: { runIds?: readonly string[]; limit?: number } = {},
): Promise<HeldRun[]> {
  if (options.runIds?.length === 0) return [];
  const only = options.runIds ? [...options.runIds] : null;
  const rows = await db.$queryRaw<Row[]>`
    select "runId", "lastSeenAt", details, "stuckReason"
      from (select distinct on (a.run_id) a.run_id::text as "runId", a.at as "lastSeenAt", a.details,
                   r.stuck_reason as "stuckReason", (a.details->>'row_xmin' is null or a.details->>'row_xmin' = r.xmin::text) as unwritten
              from "sagaflow"."anomaly_log" a
              join "sagaflow"."flow_runs" r on r.id = a.run_id
             where a.code = 'run_held' and a.at > now() - ${shownForSeconds} * interval '1 second'
               and (${only}::uuid[] is null or a.run_id = any(${only}::uuid[]))
               and r.status = any(${[...openRunStatuses]}::text[])
             order by a.run_id, a.at desc) h
     where unwritten
     limit ${options.limit ?? heldRunsListed}`;
  return rows.map((r) => {
    const d = (typeof r.details === 'object' && r.details !== null ? r.details : {}) as Record<string, unknown>;
    return {
      runId: r.runId,
      sweep: typeof d.sweep === 'string' ? d.sweep : 'monitor',
      since: typeof d.since === 'string' ? d.since : null,
      lastSeenAt: r.lastSeenAt,
      heldSeconds: typeof d.held_seconds === 'number' ? d.held_seconds : null,
      stuckReason: r.stuckReason,
    };
  });
}

/**
 * How many open runs are held, by the kind of stuck reason each carried before (null: none). Exact, whatever
 * their number: the stuck counts move them under `run_held`.
 */
export async function readHeldCountsByPriorKind(db: SqlReader): Promise<{ kind: string | null; count: number }[]> {
  return db.$queryRaw<{ kind: string | null; count: number }[]>`
    select split_part(h.stuck_reason, ':', 1) as kind, count(*)::int as count
      from (select distinct on (a.run_id) r.stuck_reason, (a.details->>'row_xmin' is null or a.details->>'row_xmin' = r.xmin::text) as unwritten
              from "sagaflow"."anomaly_log" a
              join "sagaflow"."flow_runs" r on r.id = a.run_id
             where a.code = 'run_held' and a.at > now() - ${shownForSeconds} * interval '1 second'
               and r.status = any(${[...openRunStatuses]}::text[])
             order by a.run_id, a.at desc) h
     where unwritten
     group by 1`;
}

/**
 * What the lists and the run's page show as a held run's stuck reason: the kind `run_held` first, what holds
 * it and what to do, then the reason it carried before, if any.
 */
export function heldStuckReason(held: HeldRun): string {
  const since = held.since ?? held.lastSeenAt.toISOString();
  const before = held.stuckReason === null ? '' : ` Its stuck reason before: ${held.stuckReason}`;
  return (
    `run_held: another database session has held this run's row (or a row of it: a step, a child) since ${since}, ` +
    `so the monitor's ${held.sweep} could write nothing to it (last found held at ${held.lastSeenAt.toISOString()}). ` +
    "End that session's transaction (pg_stat_activity, state 'idle in transaction'); the monitor then does its work." +
    before
  );
}
