import type { Database } from '@sagaflow/engine';
import type { SqlReader } from '../../metrics/reads/sql-reader.ts';
import { withReadSnapshot } from '../../metrics/reads/with-read-snapshot.ts';
import { countedTransition } from '../../metrics/reads/counted-transitions.ts';
import { bucketEdges, countByBucket } from './count-by-bucket.ts';
import { bucketGrid, zeroFilled, type BucketGrid, type SeriesInput } from './series-window.ts';

/** Time series for the overview's charts; every `counts` array is parallel to `buckets`. */
export interface Series {
  window: BucketGrid['window'];
  bucket: BucketGrid['bucket'];
  bucketSeconds: number;
  from: string;
  until: string;
  /** Start of each bucket (ISO), oldest first. */
  buckets: string[];
  runsStarted: number[];
  /** Runs that reached a terminal status in each bucket, by that status. */
  runsFinished: { outcome: string; counts: number[] }[];
  /** Process transitions (applied and repairs) by process and (from → to). */
  transitions: { process: string; from: string; to: string; counts: number[] }[];
  anomalies: { code: string; counts: number[] }[];
  repairs: { command: string; outcome: string; counts: number[] }[];
  /** Outbox messages published per bucket, and the longest a published one waited since it was written (s; null: none published). */
  outbox: { published: number[]; maxLagSeconds: (number | null)[] };
}

const split = (key: string) => JSON.parse(key) as string[];

async function outboxLagByBucket(db: SqlReader, grid: BucketGrid) {
  const edges = bucketEdges(grid, 'o.published_at');
  const rows = await db.$queryRawUnsafe<{ bucket: Date; count: number; lag: number }[]>(
    `select b.bucket, c.count, c.lag
       from ${edges.rows}
       cross join lateral (
         select count(*)::int as count, max(extract(epoch from o.published_at - o.created_at))::float8 as lag
           from "sagaflow"."outbox" o
          where ${edges.inBucket}
         having count(*) > 0) c`,
    grid.from,
    grid.until,
  );
  const at = new Map(rows.map((r) => [r.bucket.getTime(), r]));
  return {
    published: grid.starts.map((s) => at.get(s.getTime())?.count ?? 0),
    maxLagSeconds: grid.starts.map((s) => {
      const lag = at.get(s.getTime())?.lag;
      return lag === undefined ? null : Math.max(0, Math.round(lag * 1000) / 1000);
    }),
  };
}

/**
 * The overview's time series over a bounded window (1 h to 7 d, per minute or hour): runs started
 * and finished by outcome, transitions by process and (from → to), anomalies by code, repairs by
 * command and outcome, outbox publishing lag. Each is a range read of an indexed time column per
 * bucket (ADR 0022, 0036), all in one read-only snapshot; buckets without rows are zeros.
 *
 * @example
 * const s = await readSeries(ctx.db, { window: '1h' }, new Date());
 * s.buckets.length; // 60
 */
export async function readSeries(
  db: Pick<Database, 'prisma'>,
  input: SeriesInput,
  now: Date,
  options: { timeoutMs?: number } = {},
): Promise<Series> {
  const grid = bucketGrid(input, now);
  // No JIT: a chart's estimated cost (a busy window's rows) can pass `jit_above_cost`, and
  // compiling took 30–250 ms more than the read itself (ADR 0036).
  return withReadSnapshot(
    db,
    options.timeoutMs ?? 10_000,
    async (tx) => {
      const started = await countByBucket(tx, grid, {
        from: '"sagaflow"."flow_runs" r',
        time: 'r.created_at',
        keys: [],
      });
      const finished = await countByBucket<'outcome'>(tx, grid, {
        from: '"sagaflow"."flow_runs" r',
        time: 'r.finished_at',
        keys: ['r.status as "outcome"'],
      });
      const transitions = await countByBucket<'process' | 'from' | 'to'>(tx, grid, {
        // A transition carries its process: the bucket is read from the chart's partial index alone,
        // with no lookup of each transition's instance (ADR 0040).
        from: '"sagaflow"."process_transitions" t',
        time: 't.at',
        keys: ['t.process_name as "process"', 't.from_state as "from"', 't.to_state as "to"'],
        where: countedTransition('t'),
      });
      const anomalies = await countByBucket<'code'>(tx, grid, {
        from: '"sagaflow"."anomaly_log" a',
        time: 'a.at',
        keys: ['a.code as "code"'],
      });
      const repairs = await countByBucket<'command' | 'outcome'>(tx, grid, {
        from: '"sagaflow"."repair_commands" c',
        time: 'c.at',
        keys: ['c.command as "command"', 'c.status as "outcome"'],
      });
      const outbox = await outboxLagByBucket(tx, grid);
      const sorted = <T>(m: Map<string, number[]>, make: (key: string[], counts: number[]) => T): T[] =>
        [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, counts]) => make(split(k), counts));
      return {
        window: grid.window,
        bucket: grid.bucket,
        bucketSeconds: grid.sizeMs / 1000,
        from: grid.from.toISOString(),
        until: grid.until.toISOString(),
        buckets: grid.starts.map((s) => s.toISOString()),
        runsStarted: zeroFilled(grid, started, () => '').get('') ?? grid.starts.map(() => 0),
        runsFinished: sorted(
          zeroFilled(grid, finished, (r) => JSON.stringify([r.outcome])),
          ([outcome], counts) => ({
            outcome: outcome ?? '',
            counts,
          }),
        ),
        transitions: sorted(
          zeroFilled(grid, transitions, (r) => JSON.stringify([r.process, r.from, r.to])),
          ([process, from, to], counts) => ({ process: process ?? '', from: from ?? '', to: to ?? '', counts }),
        ),
        anomalies: sorted(
          zeroFilled(grid, anomalies, (r) => JSON.stringify([r.code])),
          ([code], counts) => ({
            code: code ?? '',
            counts,
          }),
        ),
        repairs: sorted(
          zeroFilled(grid, repairs, (r) => JSON.stringify([r.command, r.outcome])),
          ([command, outcome], counts) => ({ command: command ?? '', outcome: outcome ?? '', counts }),
        ),
        outbox,
      };
    },
    { jit: false },
  );
}
