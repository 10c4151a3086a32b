import type { SqlReader } from '../../metrics/reads/sql-reader.ts';
import type { BucketGrid } from './series-window.ts';

/** What to count: our own constants, never input (they are inlined into the SQL). */
export interface BucketCount {
  /** A table (or join) with its alias, e.g. `"sagaflow"."anomaly_log" a`. */
  from: string;
  /** The indexed time column the window ranges over, e.g. `a.at`. */
  time: string;
  /** Columns to group by besides the bucket, as `expression as "name"`. */
  keys: string[];
  /** Further conditions on the rows (constants only). */
  where?: string;
}

export type BucketRow<K extends string> = { bucket: Date; count: number } & Record<K, string>;

/**
 * The grid's buckets as rows `b(bucket)` (each bucket's start, from `$1`, the window's start), and
 * the condition that puts `time` in bucket `b`: `[start, start + size)`, the bucket
 * `date_bin(size, time, '2000-01-01Z')` names, since the grid is aligned on the epoch. The buckets
 * come from an integer series with constant bounds, so the planner knows how many there are (a
 * series of timestamps is guessed at 1,000 rows); the window's own bounds (`$1`, `$2`) are repeated
 * beside the bucket's so it estimates a bucket's rows from the window, not from a blind guess.
 */
export function bucketEdges(grid: BucketGrid, time: string) {
  const size = `'${grid.sizeMs / 1000} seconds'::interval`;
  return {
    rows: `(select $1::timestamptz + n * ${size} as bucket from generate_series(0, ${grid.starts.length - 1}) n) b`,
    inBucket:
      `${time} >= $1::timestamptz and ${time} < $2::timestamptz` +
      ` and ${time} >= b.bucket and ${time} < b.bucket + ${size}`,
  };
}

/**
 * Counts the rows whose `time` falls in the grid's window, per bucket and key: for each bucket, one
 * range read of the time column's index over that bucket alone (ADR 0036). Rows outside the window
 * are never read, no row is binned or sorted one by one, and a read is as long as one bucket, not
 * the window. Buckets without rows give no row. Only the window's bounds are bind parameters.
 */
export function countByBucket<K extends string>(
  db: SqlReader,
  grid: BucketGrid,
  spec: BucketCount,
): Promise<BucketRow<K>[]> {
  const edges = bucketEdges(grid, spec.time);
  const names = spec.keys.map((k) => k.slice(k.lastIndexOf(' as ') + 4));
  const groupBy = spec.keys.length > 0 ? ` group by ${spec.keys.map((_, i) => i + 1).join(', ')}` : '';
  return db.$queryRawUnsafe<BucketRow<K>[]>(
    `select b.bucket${names.map((n) => `, c.${n}`).join('')}, c.count
       from ${edges.rows}
       cross join lateral (
         select ${[...spec.keys, 'count(*)::int as count'].join(', ')}
           from ${spec.from}
          where ${edges.inBucket}${spec.where ? ` and ${spec.where}` : ''}${groupBy}
         having count(*) > 0) c`,
    grid.from,
    grid.until,
  );
}
