import type { SqlReader } from './sql-reader.ts';

export interface RetentionAge {
  /** flow_runs: the oldest finished run still stored; outbox: the oldest published row still stored. */
  table: 'flow_runs' | 'outbox';
  seconds: number;
}

/**
 * How old the oldest history retention could remove is (ADR 0027), at `at`: when it stays well above
 * `retention.older_than_seconds`, pruning is off or not keeping up. Each is the first entry of an
 * index (flow_runs (finished_at, status), outbox (published_at)), not a scan. 0 when there is none.
 */
export async function readRetentionAges(db: SqlReader, at: Date): Promise<RetentionAge[]> {
  const rows = await db.$queryRaw<{ runs: Date | null; outbox: Date | null }[]>`
    select (select min(finished_at) from "sagaflow"."flow_runs") as runs,
           (select min(published_at) from "sagaflow"."outbox") as outbox`;
  const age = (t: Date | null | undefined) => (t ? Math.max(0, (at.getTime() - t.getTime()) / 1000) : 0);
  return [
    { table: 'flow_runs', seconds: age(rows[0]?.runs) },
    { table: 'outbox', seconds: age(rows[0]?.outbox) },
  ];
}
