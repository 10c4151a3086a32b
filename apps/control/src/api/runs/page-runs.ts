import { z } from 'zod';
import { openRunStatuses, terminalRunStatuses, type RunStatus } from '@sagaflow/engine';
import { viewerProcedure, type ApiContext } from '../trpc.ts';
import { countCap, cursorInput, searchInput, staleForSecondsInput } from '../lists/page-cursor.ts';
import { isoTimeInput } from '../lists/time-cursor.ts';
import { storableText } from '../storable-text.ts';
import { heldStuckReason, readHeldRuns } from '../../metrics/reads/read-held-runs.ts';
import {
  afterCursor,
  cappedCounts,
  checkCursorOrder,
  finishPage,
  idOrKey,
  keysetOrder,
  nameInput,
} from '../lists/keyset-page.ts';

export const runStatuses = [...openRunStatuses, ...terminalRunStatuses] as [RunStatus, ...RunStatus[]];

const name = nameInput;

export const pageRunsInput = z
  .object({
    status: z.array(z.enum(runStatuses)).max(20).optional(),
    flowName: name.optional(),
    /** `true`: only runs with a stuck reason, or found held lately (`run_held`, ADR 0138). */
    stuckOnly: z.boolean().optional(),
    /**
     * Only runs whose stuck reason starts with this (its kind: replay_blocked, unknown_flow, ...); `run_held`:
     * the runs the monitor found held lately, which are left out of the other kinds.
     */
    stuckReason: name.optional(),
    businessKey: storableText(500).min(1).optional(),
    /** A run id or a business key, matched exactly. */
    search: searchInput.optional(),
    createdFrom: isoTimeInput.optional(),
    createdTo: isoTimeInput.optional(),
    staleForSeconds: staleForSecondsInput.optional(),
    order: z.enum(['newest', 'stalest']).default('newest'),
    limit: z.number().int().min(1).max(200).default(50),
    cursor: cursorInput.optional(),
    /** Sent by tRPC's infinite queries; only forward paging exists. */
    direction: z.literal('forward').optional(),
  })
  .strict()
  .prefault({})
  .superRefine((input, ctx) => {
    checkCursorOrder(input, ctx);
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
  /** The recorded error's message (or its JSON), cut to `errorMessageChars`; the run page has it whole. */
  errorMessage: string | null;
}

export const errorMessageChars = 300;

function errorLine(error: unknown): string | null {
  if (error === null || error === undefined) return null;
  const text =
    typeof error === 'string'
      ? error
      : typeof error === 'object' && 'message' in error && typeof error.message === 'string'
        ? error.message
        : JSON.stringify(error);
  return text.length > errorMessageChars ? `${text.slice(0, errorMessageChars - 1)}…` : text;
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
  error: true,
} as const;

type Where = NonNullable<NonNullable<Parameters<ApiContext['db']['prisma']['flowRun']['findMany']>[0]>['where']>;

/**
 * Every filter but status (the counts are per status under the rest of the filter). `heldIds`: the open runs
 * found held lately, stuck as `run_held` whatever their row says (ADR 0138).
 */
function whereExceptStatus(input: PageRunsInput, now: number, heldIds: string[]): Where[] {
  const and: Where[] = [];
  if (input.flowName !== undefined) and.push({ flow_name: input.flowName });
  if (input.stuckOnly)
    and.push(
      heldIds.length > 0
        ? { OR: [{ stuck_reason: { not: null } }, { id: { in: heldIds } }] }
        : { stuck_reason: { not: null } },
    );
  if (input.stuckReason === 'run_held') and.push({ id: { in: heldIds } });
  else if (input.stuckReason !== undefined) {
    and.push({ stuck_reason: { startsWith: input.stuckReason } });
    if (heldIds.length > 0) and.push({ id: { notIn: heldIds } });
  }
  if (input.businessKey !== undefined) and.push({ business_key: input.businessKey });
  if (input.search !== undefined) and.push(idOrKey(input.search, 'business_key'));
  if (input.createdFrom !== undefined) and.push({ created_at: { gte: new Date(input.createdFrom) } });
  if (input.createdTo !== undefined) and.push({ created_at: { lte: new Date(input.createdTo) } });
  if (input.staleForSeconds !== undefined) {
    const cutoff = new Date(now - input.staleForSeconds * 1000);
    // updated_at is never before created_at (migration 0030's trigger, ADR 0115), so the same cutoff
    // bounds created_at: read newest first, the (..., created_at, id) indexes start at the cutoff
    // instead of walking every fresh row to reach the first stale one.
    and.push({ updated_at: { lte: cutoff } }, { created_at: { lte: cutoff } });
  }
  return and;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * One page of runs under server-side filters, with a keyset cursor (sort key and id of the last
 * row), so paging reaches every row once however many there are; and per-status counts under the
 * same filter, each capped at `countCap` so a count never scans more than that many index entries.
 */
export async function pageRuns(ctx: Pick<ApiContext, 'db'>, input: PageRunsInput) {
  const db = ctx.db.prisma;
  // A stuck filter reads every held run (they filter the page); otherwise only the page's are read, below.
  const allHeld = input.stuckOnly || input.stuckReason !== undefined ? await readHeldRuns(db) : null;
  const heldIds = allHeld?.map((h) => h.runId) ?? [];
  const rest = whereExceptStatus(input, Date.now(), heldIds);
  const statusWhere: Where[] = input.status?.length ? [{ status: { in: input.status } }] : [];
  const rows = await db.flowRun.findMany({
    where: { AND: [...rest, ...statusWhere, ...(input.cursor ? [afterCursor(input.cursor)] : [])] },
    select: summaryColumns,
    orderBy: keysetOrder(input.order),
    take: input.limit + 1,
  });
  const { page, nextCursor } = finishPage(rows, input.limit, input.order);
  const counts = await cappedCounts(runStatuses, (status, take) =>
    db.flowRun.count({ where: { AND: [...rest, { status }] }, orderBy: { status: 'asc' }, take }),
  );
  const held = new Map(
    (allHeld ?? (await readHeldRuns(db, { runIds: page.map((r) => r.id) }))).map((h) => [h.runId, h]),
  );
  return {
    items: page.map((r): RunSummary => ({
      id: r.id,
      flowName: r.flow_name,
      flowVersion: r.flow_version,
      status: r.status,
      stuckReason: held.has(r.id) ? heldStuckReason(held.get(r.id)!) : r.stuck_reason,
      waitingFor: r.waiting_for,
      businessKey: r.business_key,
      tags: r.tags,
      parentRunId: r.parent_run_id,
      cancelRequestedAt: iso(r.cancel_requested_at),
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
      startedAt: iso(r.started_at),
      finishedAt: iso(r.finished_at),
      errorMessage: errorLine(r.error),
    })),
    nextCursor,
    /** Per status, under every filter but status; `countCap` means "at least that many". */
    counts,
    countCap,
  };
}

export const pageRunsProcedure = viewerProcedure.input(pageRunsInput).query(({ ctx, input }) => pageRuns(ctx, input));
