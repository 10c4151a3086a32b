import { instancesFailingTimeouts, instanceStatuses, type InstanceStatus } from '@sagaflow/engine';
import { z } from 'zod';
import { viewerProcedure, type ApiContext } from '../trpc.ts';
import { countCap, cursorInput, searchInput, staleForSecondsInput } from '../lists/page-cursor.ts';
import {
  afterCursor,
  cappedCounts,
  checkCursorOrder,
  finishPage,
  idOrKey,
  keysetOrder,
  nameInput,
} from '../lists/keyset-page.ts';
import { toFailingTimeoutSummary, type InstanceSummary } from './instance-summary.ts';

const statuses = instanceStatuses as [InstanceStatus, ...InstanceStatus[]];

const name = nameInput;

export const pageInstancesInput = z
  .object({
    /** ACTIVE, COMPLETED, QUARANTINED; several at once; none means every status. */
    status: z.array(z.enum(statuses)).max(3).optional(),
    processName: name.optional(),
    /** The state the instance is in (ManualReview, ...). */
    state: name.optional(),
    /** An instance id or a correlation key, matched exactly. */
    search: searchInput.optional(),
    staleForSeconds: staleForSecondsInput.optional(),
    /**
     * Only the failing instances: a failure record (a message failing, seed 002) or a timeout whose
     * delivery keeps throwing (ADR 0127). Like runs.page's stuckOnly.
     */
    failingOnly: z.boolean().optional(),
    order: z.enum(['newest', 'stalest']).default('stalest'),
    limit: z.number().int().min(1).max(200).default(50),
    cursor: cursorInput.optional(),
    /** Sent by tRPC's infinite queries; only forward paging exists. */
    direction: z.literal('forward').optional(),
  })
  .strict()
  .prefault({})
  .superRefine((input, ctx) => {
    checkCursorOrder(input, ctx);
  });

export type PageInstancesInput = z.output<typeof pageInstancesInput>;

type Where = NonNullable<NonNullable<Parameters<ApiContext['db']['prisma']['sagaInstance']['findMany']>[0]>['where']>;

function whereExceptStatus(input: PageInstancesInput, now: number): Where[] {
  const and: Where[] = [];
  if (input.processName !== undefined) and.push({ process_name: input.processName });
  if (input.state !== undefined) and.push({ current_state: input.state });
  if (input.search !== undefined) and.push(idOrKey(input.search, 'correlation_key'));
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

/** Past this many failing instances the filter is a per-row test instead of a list of ids. */
export const failingIdsCap = 5000;

/**
 * The failing instances' filter (ADR 0127): a failure record, or a Pending timeout that has failed.
 * Their ids are read first through migration 0035's two partial indexes, which hold only those rows,
 * so the page then reads only them however many healthy instances there are. Past `failingIdsCap`
 * (a wide outage) the filter tests each row instead.
 */
async function failingWhere(ctx: Pick<ApiContext, 'db'>): Promise<Where> {
  const rows = await ctx.db.prisma.$queryRaw<{ id: string }[]>`
    select id::text as id from (
      -- A timeout of a visit its instance has left is stale (ADR 0012), not failing (review 59).
      select t.instance_id as id from "sagaflow"."process_timeouts" t
        join "sagaflow"."saga_instances" j
          on j.id = t.instance_id and j.status <> 'COMPLETED'
         and j.current_state = t.expected_state and j.state_visit = t.armed_visit
       where t.status = 'Pending' and t.attempts > 0
      union
      select id from "sagaflow"."saga_instances" where failure_redelivery_key is not null
    ) f
    limit ${failingIdsCap + 1}::int`;
  if (rows.length <= failingIdsCap) return { id: { in: rows.map((r) => r.id) } };
  // Past the cap the test is per row, and Prisma cannot compare a timeout's visit with its instance's: a
  // stale failed timeout then lists its instance too, whose row shows no failing timeout.
  return {
    OR: [{ failure_redelivery_key: { not: null } }, { timeouts: { some: { status: 'Pending', attempts: { gt: 0 } } } }],
  };
}

/**
 * One page of process instances (never their decoded state or kept payloads), keyset-paged like
 * runs.page, with per-status counts under the rest of the filter, capped at `countCap`. Each item
 * carries its failing timeout (ADR 0127), read by the page's ids.
 */
export async function pageInstances(ctx: Pick<ApiContext, 'db'>, input: PageInstancesInput) {
  const db = ctx.db.prisma;
  const rest = whereExceptStatus(input, Date.now());
  if (input.failingOnly) rest.push(await failingWhere(ctx));
  const statusWhere: Where[] = input.status?.length ? [{ status: { in: input.status } }] : [];
  const rows = await db.sagaInstance.findMany({
    where: { AND: [...rest, ...statusWhere, ...(input.cursor ? [afterCursor(input.cursor)] : [])] },
    omit: { state: true, failure_payload: true },
    orderBy: keysetOrder(input.order),
    take: input.limit + 1,
  });
  const { page, nextCursor } = finishPage(rows, input.limit, input.order);
  const failingTimeouts = await instancesFailingTimeouts(
    ctx.db,
    page.map((i) => i.id),
  );
  const counts = await cappedCounts(statuses, (status, take) =>
    db.sagaInstance.count({ where: { AND: [...rest, { status }] }, orderBy: { status: 'asc' }, take }),
  );
  return {
    items: page.map((i): InstanceSummary => ({
      id: i.id,
      processName: i.process_name,
      correlationKey: i.correlation_key,
      status: i.status as InstanceStatus,
      currentState: i.current_state,
      version: i.version,
      createdAt: i.created_at.toISOString(),
      updatedAt: i.updated_at.toISOString(),
      completedAt: iso(i.completed_at),
      nextTimerDueAt: iso(i.next_timer_due_at),
      lastMessageId: i.last_message_id,
      failure:
        i.failure_redelivery_key !== null
          ? {
              redeliveryKey: i.failure_redelivery_key,
              position: i.failure_position === null ? null : String(i.failure_position),
              errorType: i.failure_error_type ?? '',
              message: i.failure_message ?? '',
              messageType: i.failure_message_type,
              firstFailedAt: (i.first_failed_at ?? i.updated_at).toISOString(),
            }
          : null,
      failingTimeout: toFailingTimeoutSummary(failingTimeouts.get(i.id)),
    })),
    nextCursor,
    counts,
    countCap,
  };
}

export const pageInstancesProcedure = viewerProcedure
  .input(pageInstancesInput)
  .query(({ ctx, input }) => pageInstances(ctx, input));
