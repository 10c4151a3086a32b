import { z } from 'zod';
import { isoTimeInput } from '../lists/time-cursor.ts';

/** The windows a chart may ask for, in milliseconds: bounded, so a series never reads more than a week. */
export const seriesWindows = { '1h': 3_600_000, '6h': 21_600_000, '24h': 86_400_000, '7d': 604_800_000 } as const;
export type SeriesWindow = keyof typeof seriesWindows;

export const bucketSizes = { minute: 60_000, hour: 3_600_000 } as const;
export type BucketSize = keyof typeof bucketSizes;

/** At most this many buckets in one answer (a day of minutes): a week per minute is refused. */
export const maxBuckets = 1440;

/** The bucket a window gets when none is asked for: minutes up to 6 h, hours beyond. */
export const defaultBucket = (w: SeriesWindow): BucketSize => (seriesWindows[w] <= 21_600_000 ? 'minute' : 'hour');

export const seriesInput = z
  .object({
    window: z.enum(Object.keys(seriesWindows) as [SeriesWindow, ...SeriesWindow[]]).default('1h'),
    bucket: z.enum(['minute', 'hour']).optional(),
    /** The window ends with the bucket holding this time (default: now). */
    until: isoTimeInput.optional(),
  })
  .strict()
  .prefault({})
  .superRefine((input, ctx) => {
    const bucket = input.bucket ?? defaultBucket(input.window);
    if (seriesWindows[input.window] / bucketSizes[bucket] > maxBuckets)
      ctx.addIssue({
        code: 'custom',
        path: ['bucket'],
        message: `${input.window} per ${bucket} is more than ${maxBuckets} buckets; ask per hour`,
      });
    if (input.until !== undefined) {
      const t = Date.parse(input.until);
      if (t < Date.UTC(2000, 0, 1) || t > Date.now() + 86_400_000)
        ctx.addIssue({ code: 'custom', path: ['until'], message: 'must be between 2000-01-01 and a day from now' });
    }
  });

export type SeriesInput = z.output<typeof seriesInput>;

/** A resolved window: [from, until) cut into `count` buckets of `sizeMs`, the last one holding `until`. */
export interface BucketGrid {
  window: SeriesWindow;
  bucket: BucketSize;
  sizeMs: number;
  from: Date;
  until: Date;
  /** Start of each bucket, oldest first. */
  starts: Date[];
}

/**
 * The buckets of a window. Buckets are aligned on the epoch (whole UTC minutes and hours), as
 * PostgreSQL's `date_bin(size, t, '2000-01-01Z')` aligns them, so SQL's bucket and ours agree.
 */
export function bucketGrid(input: SeriesInput, now: Date): BucketGrid {
  const bucket = input.bucket ?? defaultBucket(input.window);
  const sizeMs = bucketSizes[bucket];
  const at = input.until === undefined ? now.getTime() : Date.parse(input.until);
  const end = Math.floor(at / sizeMs) * sizeMs + sizeMs;
  const count = Math.max(1, Math.ceil(seriesWindows[input.window] / sizeMs));
  const start = end - count * sizeMs;
  return {
    window: input.window,
    bucket,
    sizeMs,
    from: new Date(start),
    until: new Date(end),
    starts: Array.from({ length: count }, (_, i) => new Date(start + i * sizeMs)),
  };
}

/**
 * Spreads `rows` (a bucket start and a count, by some key) over the grid: one array per key, a zero
 * in every bucket the rows do not name, so a chart draws a continuous line.
 */
export function zeroFilled<R extends { bucket: Date; count: number }>(
  grid: BucketGrid,
  rows: readonly R[],
  keyOf: (r: R) => string,
): Map<string, number[]> {
  const index = new Map(grid.starts.map((s, i) => [s.getTime(), i]));
  const out = new Map<string, number[]>();
  for (const r of rows) {
    const i = index.get(r.bucket.getTime());
    if (i === undefined) continue;
    const key = keyOf(r);
    let counts = out.get(key);
    if (!counts) out.set(key, (counts = grid.starts.map(() => 0)));
    counts[i] = (counts[i] ?? 0) + r.count;
  }
  return out;
}
