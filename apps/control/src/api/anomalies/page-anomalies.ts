import { anomalyCodes, type AnomalyCode } from '@sagaflow/engine';
import { z } from 'zod';
import { viewerProcedure, type ApiContext } from '../trpc.ts';
import {
  checkTimeRange,
  encodeTimeCursor,
  isoTimeInput,
  timeCursorInput,
  type TimeCursor,
} from '../lists/time-cursor.ts';
import { bigintIdKey } from '../lists/history-keys.ts';

export const pageAnomaliesInput = z
  .object({
    code: z.enum(anomalyCodes as unknown as [AnomalyCode, ...AnomalyCode[]]).optional(),
    runId: z.uuid().optional(),
    /** Journaled at or after this time. */
    from: isoTimeInput.optional(),
    /** Journaled at or before this time. */
    to: isoTimeInput.optional(),
    limit: z.number().int().min(1).max(200).default(50),
    cursor: timeCursorInput(bigintIdKey).optional(),
    /** Sent by tRPC's infinite queries; only forward paging exists. */
    direction: z.literal('forward').optional(),
  })
  .strict()
  .prefault({})
  .superRefine(checkTimeRange);

export type PageAnomaliesInput = z.output<typeof pageAnomaliesInput>;

/** One journaled anomaly, as the anomaly log shows it. */
export interface AnomalyEntry {
  id: string;
  code: string;
  runId: string | null;
  /** The step row (action or compensation) it happened on, and its sequence in the run. */
  rowId: string | null;
  sequence: number | null;
  name: string | null;
  site: string | null;
  message: string;
  details: unknown;
  at: string;
}

type Where = NonNullable<NonNullable<Parameters<ApiContext['db']['prisma']['anomalyLog']['findMany']>[0]>['where']>;

/** After the cursor; the plain `at <=` bound is the index scan's start (see keyset-page's afterCursor). */
const after = (c: TimeCursor): Where => ({
  at: { lte: c.at },
  OR: [{ at: { lt: c.at } }, { at: c.at, id: { lt: BigInt(c.key) } }],
});

/**
 * One page of the anomaly journal, newest first by (at, id), under filters by code, run and time
 * range. A keyset cursor (the last row's time and id), so paging reaches every row once while the
 * engine keeps journaling: a new anomaly sorts before the first page. Reads through the journal's
 * (at), (code, at) and (run_id) indexes.
 */
export async function pageAnomalies(ctx: Pick<ApiContext, 'db'>, input: PageAnomaliesInput) {
  const and: Where[] = [];
  if (input.code !== undefined) and.push({ code: input.code });
  if (input.runId !== undefined) and.push({ run_id: input.runId });
  if (input.from !== undefined) and.push({ at: { gte: new Date(input.from) } });
  if (input.to !== undefined) and.push({ at: { lte: new Date(input.to) } });
  if (input.cursor) and.push(after(input.cursor));
  const rows = await ctx.db.prisma.anomalyLog.findMany({
    where: { AND: and },
    orderBy: [{ at: 'desc' }, { id: 'desc' }],
    take: input.limit + 1,
  });
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    items: page.map((r): AnomalyEntry => ({
      id: r.id.toString(),
      code: r.code,
      runId: r.run_id,
      rowId: r.row_id,
      sequence: r.sequence,
      name: r.name,
      site: r.site,
      message: r.message,
      details: r.details,
      at: r.at.toISOString(),
    })),
    nextCursor: rows.length > input.limit && last ? encodeTimeCursor({ at: last.at, key: last.id.toString() }) : null,
  };
}

export const pageAnomaliesProcedure = viewerProcedure
  .input(pageAnomaliesInput)
  .query(({ ctx, input }) => pageAnomalies(ctx, input));
