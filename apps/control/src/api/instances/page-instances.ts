import { instanceStatuses, type InstanceStatus } from '@sagaflow/engine';
import { z } from 'zod';
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
import type { InstanceSummary } from './instance-summary.ts';

const statuses = instanceStatuses as [InstanceStatus, ...InstanceStatus[]];

const name = z
  .string()
  .min(1)
  .max(200)
  .refine((s) => !s.includes('\u0000'), { message: 'must not contain NUL' });

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
    order: z.enum(['newest', 'stalest']).default('stalest'),
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
  });

export type PageInstancesInput = z.output<typeof pageInstancesInput>;

type Where = NonNullable<NonNullable<Parameters<ApiContext['db']['prisma']['sagaInstance']['findMany']>[0]>['where']>;

function whereExceptStatus(input: PageInstancesInput, now: number): Where[] {
  const and: Where[] = [];
  if (input.processName !== undefined) and.push({ process_name: input.processName });
  if (input.state !== undefined) and.push({ current_state: input.state });
  if (input.search !== undefined)
    and.push(
      isUuid(input.search)
        ? { OR: [{ id: input.search.toLowerCase() }, { correlation_key: input.search }] }
        : { correlation_key: input.search },
    );
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
 * One page of process instances (never their decoded state or kept payloads), keyset-paged like
 * runs.page, with per-status counts under the rest of the filter, capped at `countCap`.
 */
export async function pageInstances(ctx: Pick<ApiContext, 'db'>, input: PageInstancesInput) {
  const db = ctx.db.prisma;
  const rest = whereExceptStatus(input, Date.now());
  const statusWhere: Where[] = input.status?.length ? [{ status: { in: input.status } }] : [];
  const rows = await db.sagaInstance.findMany({
    where: { AND: [...rest, ...statusWhere, ...(input.cursor ? [after(input.cursor)] : [])] },
    omit: { state: true, failure_payload: true },
    orderBy:
      input.order === 'newest' ? [{ created_at: 'desc' }, { id: 'desc' }] : [{ updated_at: 'asc' }, { id: 'asc' }],
    take: input.limit + 1,
  });
  const more = rows.length > input.limit;
  const page = more ? rows.slice(0, input.limit) : rows;
  const last = page.at(-1);
  const counted = await Promise.all(
    statuses.map((status) => db.sagaInstance.count({ where: { AND: [...rest, { status }] }, take: countCap + 1 })),
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
    })),
    nextCursor:
      more && last
        ? encodeCursor({
            order: input.order,
            at: input.order === 'newest' ? last.created_at : last.updated_at,
            id: last.id,
          })
        : null,
    counts: Object.fromEntries(statuses.map((s, i) => [s, Math.min(counted[i]!, countCap)])) as Record<
      InstanceStatus,
      number
    >,
    countCap,
  };
}

export const pageInstancesProcedure = viewerProcedure
  .input(pageInstancesInput)
  .query(({ ctx, input }) => pageInstances(ctx, input));
