import { z } from 'zod';
import { nameInput } from '../lists/keyset-page.ts';
import { isUuid } from '../lists/page-cursor.ts';
import {
  checkTimeRange,
  encodeTimeCursor,
  isoTimeInput,
  timeCursorInput,
  type TimeCursor,
} from '../lists/time-cursor.ts';
import { viewerProcedure, type ApiContext } from '../trpc.ts';
import { auditKey, runOfTarget, type AuditEntry, type AuditSource } from './audit-entry.ts';

const uuidPattern = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

export const pageAuditInput = z
  .object({
    /** Only repairs (drafts and rejections included), or only sign-ins, operator changes and runs started. */
    source: z.enum(['repair', 'auth']).optional(),
    /** Who acted (an operator's name), exactly. */
    actor: nameInput.optional(),
    /** A repair command (`run.kick`) or an auth action (`sign_in`), exactly. */
    command: nameInput.optional(),
    /**
     * A run, instance or outbox row id (a run's step repairs included), or another target's id. A
     * UUID-shaped target is matched in either case (ids are stored in lower case, ADR 0102 / 0115);
     * any other target exactly.
     */
    target: nameInput.optional(),
    outcome: nameInput.optional(),
    from: isoTimeInput.optional(),
    to: isoTimeInput.optional(),
    limit: z.number().int().min(1).max(200).default(50),
    cursor: timeCursorInput(z.string().regex(new RegExp(`^(repair|auth):${uuidPattern}$`))).optional(),
    direction: z.literal('forward').optional(),
  })
  .strict()
  .prefault({})
  .superRefine(checkTimeRange);

export type PageAuditInput = z.output<typeof pageAuditInput>;

type Prisma = ApiContext['db']['prisma'];
type RepairWhere = NonNullable<NonNullable<Parameters<Prisma['repairCommand']['findMany']>[0]>['where']>;
type AuthWhere = NonNullable<NonNullable<Parameters<Prisma['auditEvent']['findMany']>[0]>['where']>;

/**
 * The rows of one source that sort after the cursor in (at desc, key desc) order. Keys are
 * `source:id`, so at an equal time every `repair:` key sorts above every `auth:` key.
 */
function afterCursor(source: AuditSource, c: TimeCursor) {
  const [cursorSource, id] = c.key.split(':') as [AuditSource, string];
  if (source < cursorSource) return { at: { lte: c.at } };
  if (source > cursorSource) return { at: { lt: c.at } };
  // The plain `at <=` bound is the index scan's start (see keyset-page's afterCursor).
  return { at: { lte: c.at }, OR: [{ at: { lt: c.at } }, { at: c.at, id: { lt: id } }] };
}

function timeRange(input: PageAuditInput) {
  return [
    ...(input.from !== undefined ? [{ at: { gte: new Date(input.from) } }] : []),
    ...(input.to !== undefined ? [{ at: { lte: new Date(input.to) } }] : []),
  ];
}

async function repairRows(db: Prisma, input: PageAuditInput): Promise<AuditEntry[]> {
  const and: RepairWhere[] = timeRange(input);
  if (input.actor !== undefined) and.push({ actor: input.actor });
  if (input.command !== undefined) and.push({ command: input.command });
  if (input.outcome !== undefined) and.push({ status: input.outcome });
  if (input.target !== undefined)
    and.push({
      OR: [
        { target_type: { in: ['run', 'instance', 'outbox'] }, target_id: input.target },
        { target_type: 'step', target_id: { startsWith: `${input.target}#` } },
      ],
    });
  if (input.cursor) and.push(afterCursor('repair', input.cursor));
  const rows = await db.repairCommand.findMany({
    where: { AND: and },
    orderBy: [{ at: 'desc' }, { id: 'desc' }],
    take: input.limit + 1,
  });
  return rows.map((r) => ({
    key: auditKey('repair', r.id),
    source: 'repair',
    id: r.id,
    at: r.at.toISOString(),
    actor: r.actor,
    action: r.command,
    targetType: r.target_type,
    targetId: r.target_id,
    runId: runOfTarget(r.target_type, r.target_id),
    instanceId: r.target_type === 'instance' ? r.target_id : null,
    outcome: r.status,
    reason: r.reason,
    address: null,
    details: {
      expected: r.expected,
      actual: r.actual,
      params: r.params,
      result: r.result,
      bulkId: r.bulk_id,
      via: r.via,
      approvedBy: r.approved_by,
      approvedVia: r.approved_via,
    },
  }));
}

async function authRows(db: Prisma, input: PageAuditInput): Promise<AuditEntry[]> {
  const and: AuthWhere[] = timeRange(input);
  if (input.actor !== undefined) and.push({ actor: input.actor });
  if (input.command !== undefined) and.push({ action: input.command });
  if (input.outcome !== undefined) and.push({ outcome: input.outcome });
  if (input.target !== undefined) {
    // A draft's and a rejection's rows name the approval: the approvals of the target are theirs too.
    const approvals = await approvalsOf(db, input.target);
    and.push(
      approvals.length === 0
        ? { target_id: input.target }
        : { OR: [{ target_id: input.target }, { target_type: 'approval', target_id: { in: approvals } }] },
    );
  }
  // A repair's draft and rejection live in audit_events too; they are the repairs filter's.
  if (input.source === 'repair') and.push({ action: { in: [...repairActions] } });
  if (input.source === 'auth') and.push({ action: { notIn: [...repairActions] } });
  if (input.cursor) and.push(afterCursor('auth', input.cursor));
  const rows = await db.auditEvent.findMany({
    where: { AND: and },
    orderBy: [{ at: 'desc' }, { id: 'desc' }],
    take: input.limit + 1,
  });
  return rows.map((r) => ({
    key: auditKey('auth', r.id),
    source: 'auth',
    id: r.id,
    at: r.at.toISOString(),
    actor: r.actor,
    action: r.action,
    targetType: r.target_type,
    targetId: r.target_id,
    runId: runOfTarget(r.target_type, r.target_id),
    instanceId: r.target_type === 'instance' ? r.target_id : null,
    outcome: r.outcome,
    reason: r.reason,
    address: r.address,
    details: r.details,
  }));
}

/**
 * The ids of every single-command approval drafted on a run (its step repairs included), an instance or
 * an outbox row, through `repair_approvals (target_type, target_id)` (ADR 0119). All of them, not the
 * newest few: a page that stopped following some would leave their drafts out with no sign (review
 * 45). Approvals are people's drafts, a handful per target; the ids read cost an index range each page.
 * A bulk's approval names its targets in its preview, one entry per item: the bulks with an item on the
 * target itself (a run, an instance, an outbox row) are found through the bulk rows' GIN index
 * (migration 0034, ADR 0119's second addendum).
 */
async function approvalsOf(db: Prisma, target: string): Promise<string[]> {
  const [single, bulk] = await Promise.all([
    db.repairApproval.findMany({
      where: {
        OR: [
          { target_type: { in: ['run', 'instance', 'outbox'] }, target_id: target },
          { target_type: 'step', target_id: { startsWith: `${target}#` } },
        ],
      },
      select: { id: true },
    }),
    db.$queryRaw<{ id: string }[]>`
      select id::text as id from "sagaflow"."repair_approvals"
       where bulk and preview @> ${JSON.stringify([{ target: { id: target } }])}::jsonb`,
  ]);
  return [...single, ...bulk].map((r) => r.id);
}

/** The audit_events actions about repairs: a draft waiting for approval, a rejection (ADR 0105). */
const repairActions = ['repair_drafted', 'repair_rejected'] as const;

/**
 * A target as `target_id` stores it: ids are written in lower case (ADR 0102), so a UUID-shaped
 * target is lower-cased as runs.page's search does (ADR 0115); any other target is kept as given.
 */
function targetAsStored(target: string | undefined): string | undefined {
  return target !== undefined && isUuid(target) ? target.toLowerCase() : target;
}

const newestFirst = (a: AuditEntry, b: AuditEntry) =>
  a.at !== b.at ? (a.at < b.at ? 1 : -1) : a.key < b.key ? 1 : a.key > b.key ? -1 : 0;

/**
 * One page of the audit trail: repair commands (the engine's repair_commands, ADR 0016) and
 * sign-ins and operator changes (audit_events) merged newest first by (at, source:id). Each table
 * is read through its own indexes for `limit + 1` rows after the cursor and the two are merged, so
 * a page costs two short index scans however long the trail is; the keyset cursor reaches every
 * row of both once.
 */
export async function pageAudit(ctx: Pick<ApiContext, 'db'>, given: PageAuditInput) {
  const db = ctx.db.prisma;
  const input = { ...given, target: targetAsStored(given.target) };
  const rows = [...(input.source !== 'auth' ? await repairRows(db, input) : []), ...(await authRows(db, input))].sort(
    newestFirst,
  );
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    items: page,
    nextCursor: rows.length > input.limit && last ? encodeTimeCursor({ at: new Date(last.at), key: last.key }) : null,
  };
}

export const pageAuditProcedure = viewerProcedure
  .input(pageAuditInput)
  .query(({ ctx, input }) => pageAudit(ctx, input));
