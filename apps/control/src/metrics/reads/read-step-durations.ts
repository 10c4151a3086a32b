import type { SqlReader } from './sql-reader.ts';

/** Upper bounds (seconds) of the step-duration histogram's buckets; +Inf is the count. */
export const stepDurationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300] as const;

export interface StepDurations {
  flow: string;
  action: string;
  count: number;
  /** Sum of the durations, in seconds. */
  sum: number;
  /** Cumulative: `buckets[i]` steps took at most `stepDurationBuckets[i]` seconds. */
  buckets: number[];
}

// The bounds are our own constants, never input: inlined so each bucket is one FILTER of one pass.
const bucketColumns = stepDurationBuckets.map((le) => `count(*) filter (where d <= ${le})`).join(', ');

/**
 * Actions that reached their final outcome (Completed or Errored) in the window (after, until], by
 * flow and action, as cumulative histogram buckets of how long each took from its first claim to
 * that outcome (retries and their backoff included). A terminal action row is never written again,
 * so its updated_at is when it finished, and the (status, updated_at) index keeps this to the rows
 * of the window: the caller adds windows up instead of re-reading the whole history each scrape.
 */
export async function readStepDurations(db: SqlReader, window: { after: Date; until: Date }): Promise<StepDurations[]> {
  return db.$queryRawUnsafe<StepDurations[]>(
    `
    select r.flow_name as flow, s.name as action, count(*)::int as count, coalesce(sum(d), 0)::float8 as sum,
           array[${bucketColumns}]::int[] as buckets
      from (select run_id, name, extract(epoch from finished_at - started_at)::float8 as d
              from "sagaflow"."action_runs"
             where status in ('Completed', 'Errored') and updated_at > $1::timestamptz and updated_at <= $2::timestamptz
               and kind = 'action' and started_at is not null and finished_at is not null) s
      join "sagaflow"."flow_runs" r on r.id = s.run_id
     group by r.flow_name, s.name
     order by 1, 2`,
    window.after,
    window.until,
  );
}
