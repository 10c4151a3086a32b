import { z } from 'zod';
import { openRunStatuses, terminalRunStatuses, type RunStatus } from '@sagaflow/engine';
import { viewerProcedure, type ApiContext } from '../trpc.ts';
import {
  countCap,
  cursorInput,
  encodeCursor,
  isUuid,
  searchInput,
  staleForSecondsInput,
  type PageCursor,
} from '../lists/page-cursor.ts';

export const runStatuses = [...openRunStatuses, ...terminalRunStatuses] as [RunStatus, ...RunStatus[]];

const name = z
  .string()
  .min(1)
  .max(200)
  .refine((s) => !s.includes('\u0000'), { message: 'must not contain NUL' });

export const pageRunsInput = z
  .object({
    status: z.array(z.enum(runStatuses)).max(20).optional(),
    flowName: name.optional(),
    /** `true`: only runs with a stuck reason. */
    stuckOnly: z.boolean().optional(),
    /** Only runs whose stuck reason starts with this (its kind: replay_blocked, unknown_flow, ...). */
    stuckReason: name.optional(),
    businessKey: z.string().min(1).max(500).optional(),
    /** A run id or a business key, matched exactly. */
    search: searchInput.optional(),
    createdFrom: z.iso.datetime({ offset: true }).optional(),
    createdTo: z.iso.datetime({ offset: true }).optional(),
    staleForSeconds: staleForSecondsInput.optional(),
    order: z.enum(['newest', 'stalest']).default('newest'),
    limit: z.number().int().min(1).max(200).default(50),
    cursor: cursorInput.optional(),
  })
  .strict()
  .prefault({})
  .superRefine((input, ctx) => {
    if (input.cursor && input.cursor.order !== input.order)
      ctx.addIssue({
        code: 'custom',
        path: ['cursor'],
        message: `this cursor was read in ${input.cursor.order} order, not ${input.order}; start again without it`,
      });
    if (input.createdFrom && input.createdTo && Date.parse(input.createdFrom) > Date.parse(input.createdTo))
      ctx.addIssue({ code: 'custom', path: ['createdTo'], message: 'must not be before createdFrom' });
  });

export type PageRunsInput = z.output<typeof pageRunsInput>;

/** A list row: what the list shows, never the run's input, output or error. */
export interface RunSummary {
  id: string;
  flowName: string;
  flowVersion: number;
  status: string;
  stuckReason: string | null;
  waitingFor: string | null;
  businessKey: string | null;
  tags: string[];
  parentRunId: string | null;
  cancelRequestedAt: string | null;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

const summaryColumns = {
  id: true,
  flow_name: true,
  flow_version: true,
  status: true,
  stuck_reason: true,
  waiting_for: true,
  business_key: true,
  tags: true,
  parent_run_id: true,
  cancel_requested_at: true,
  created_at: true,
  updated_at: true,
  started_at: true,
  finished_at: true,
} as const;

type Where = NonNullable<NonNullable<Parameters<ApiContext['db']['prisma']['flowRun']['findMany']>[0]>['where']>;

/** Every filter but status (the counts are per status under the rest of the filter). */
function whereExceptStatus(input: PageRunsInput, now: number): Where[] {
  const and: Where[] = [];
  if (input.flowName !== undefined) and.push({ flow_name: input.flowName });
  if (input.stuckOnly) and.push({ stuck_reason: { not: null } });
  if (input.stuckReason !== undefined) and.push({ stuck_reason: { startsWith: input.stuckReason } });
  if (input.businessKey !== undefined) and.push({ business_key: input.businessKey });
  if (input.search !== undefined)
    and.push(
      isUuid(input.search)
        ? { OR: [{ id: input.search.toLowerCase() }, { business_key: input.search }] }
        : { business_key: input.search },
    );
  if (input.createdFrom !== undefined) and.push({ created_at: { gte: new Date(input.createdFrom) } });
  if (input.createdTo !== undefined) and.push({ created_at: { lte: new Date(input.createdTo) } });
  if (input.staleForSeconds !== undefined)
    and.push({ updated_at: { lte: new Date(now - input.staleForSeconds * 1000) } });
  return and;
}

function after(cursor: PageCursor): Where {
  return cursor.order === 'newest'
    ? { OR: [{ created_at: { lt: cursor.at } }, { created_at: cursor.at, id: { lt: cursor.id } }] }
    : { OR: [{ updated_at: { gt: cursor.at } }, { updated_at: cursor.at, id: { gt: cursor.id } }] };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * One page of runs under server-side filters, with a keyset cursor (sort key and id of the last
 * row), so paging reaches every row once however many there are; and per-status counts under the
 * same filter, each capped at `countCap` so a count never scans more than that many index entries.
 */
export async function pageRuns(ctx: Pick<ApiContext, 'db'>, input: PageRunsInput) {
  const db = ctx.db.prisma;
  const rest = whereExceptStatus(input, Date.now());
  const statusWhere: Where[] = input.status?.length ? [{ status: { in: input.status } }] : [];
  const rows = await db.flowRun.findMany({
    where: { AND: [...rest, ...statusWhere, ...(input.cursor ? [after(input.cursor)] : [])] },
    select: summaryColumns,
    orderBy:
      input.order === 'newest' ? [{ created_at: 'desc' }, { id: 'desc' }] : [{ updated_at: 'asc' }, { id: 'asc' }],
    take: input.limit + 1,
  });
  const more = rows.length > input.limit;
  const page = more ? rows.slice(0, input.limit) : rows;
  const last = page.at(-1);
  const counted = await Promise.all(
    runStatuses.map((status) => db.flowRun.count({ where: { AND: [...rest, { status }] }, take: countCap + 1 })),
  );
  const counts = Object.fromEntries(runStatuses.map((s, i) => [s, Math.min(counted[i]!, countCap)])) as Record<
    RunStatus,
    number
  >;
  return {
    items: page.map((r): RunSummary => ({
      id: r.id,
      flowName: r.flow_name,
      flowVersion: r.flow_version,
      status: r.status,
      stuckReason: r.stuck_reason,
      waitingFor: r.waiting_for,
      businessKey: r.business_key,
      tags: r.tags,
      parentRunId: r.parent_run_id,
      cancelRequestedAt: iso(r.cancel_requested_at),
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
      startedAt: iso(r.started_at),
      finishedAt: iso(r.finished_at),
    })),
    nextCursor:
      more && last
        ? encodeCursor({
            order: input.order,
            at: input.order === 'newest' ? last.created_at : last.updated_at,
            id: last.id,
          })
        : null,
    /** Per status, under every filter but status; `countCap` means "at least that many". */
    counts,
    countCap,
  };
}

export const pageRunsProcedure = viewerProcedure.input(pageRunsInput).query(({ ctx, input }) => pageRuns(ctx, input));
