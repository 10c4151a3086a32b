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
 * Counts the rows whose `time` falls in the grid's window, per bucket and key: one range scan of
 * the time column's index over the window, grouped by `date_bin` aligned on the epoch (as the grid
 * is). Rows outside the window are never read, so the cost follows what happened in the window,
 * not the size of the table. Only the window's bounds are bind parameters.
 */
export function countByBucket<K extends string>(
  db: SqlReader,
  grid: BucketGrid,
  spec: BucketCount,
): Promise<BucketRow<K>[]> {
  const size = `${grid.sizeMs / 1000} seconds`;
  const keys = spec.keys.length > 0 ? `, ${spec.keys.join(', ')}` : '';
  const groupBy = spec.keys.map((_, i) => `, ${i + 2}`).join('');
  return db.$queryRawUnsafe<BucketRow<K>[]>(
    `select date_bin('${size}'::interval, ${spec.time}, timestamptz '2000-01-01 00:00:00+00') as bucket${keys},
            count(*)::int as count
       from ${spec.from}
      where ${spec.time} >= $1::timestamptz and ${spec.time} < $2::timestamptz${spec.where ? ` and ${spec.where}` : ''}
      group by 1${groupBy}`,
    grid.from,
    grid.until,
  );
}
