import { randomUUID } from 'node:crypto';
import { CliError } from '../cli-error.ts';
import type { CliContext, CommandOutcome } from '../cli-context.ts';
import type { ApiOutputs, ControlClient } from '../control-client.ts';
import { exitCodes } from '../exit-codes.ts';
import { allowOnly, idArgument, intOption, usageError, type ParsedArgs } from '../parse-cli-args.ts';

/** As the control plane's `outbox.dead` caps one read (the engine's maxDeadOutboxRows; not imported: the engine is slow to load). */
const maxDeadOutboxRows = 500;

type Row = Pick<ApiOutputs['outbox']['get'], 'id' | 'type' | 'destination' | 'status' | 'attempts'>;
type DeadRow = Row & Pick<ApiOutputs['outbox']['get'], 'availableAt'>;
type PreviewItem =
  | { notFound: string }
  | { expectedHolds: boolean; applicable: boolean; blockers: string[]; actual: Record<string, unknown> };
interface ItemOutcome {
  target: { type: string; id: string };
  outcome: string;
  repairId: string | null;
  message: string | null;
}
type BulkAnswer =
  | { bulkId: string; applied: number; items: ItemOutcome[] }
  | { status: string; approvalId: string; replayed: boolean; approval?: { decidedBy?: unknown } };

/** True when `requeue` names more than one row, the Dead rows of instances, or every Dead row: the bulk form. */
export function isBulkRequeue(args: ParsedArgs): boolean {
  return args.positionals.length > 2 || (args.options.instance?.length ?? 0) > 0 || args.options.dead === true;
}

/** Why a named row is not sent: it is not Dead (any more), or it does not exist. */
function leftOutWhy(row: Row | null): string {
  if (!row) return 'does not exist';
  if (row.status === 'Pending') return 'is Pending: it is still being sent';
  if (row.status === 'Published') return 'is Published: it was delivered, there is nothing to requeue';
  return `is ${row.status}`;
}

/**
 * `requeue <id> <id>...`, `requeue --instance <instance-id>...` and `requeue --dead [--destination D]
 * [--limit N]`: one `outbox.requeue` bulk (ADR 0104) over the named rows, every Dead row of the named
 * instances and (--dead) the longest-dead rows of the outbox, each drafted against the status and
 * attempts read now. A named row that is not Dead is left out, with why, before anything is sent; the
 * rest go as ONE bulk with one idempotency key, previewed with --dry-run, applied item by item (each
 * with its own audit row), or held as one approval when the policy gates it. Exit status as a single
 * repair: 0 every item applied (or would), 2 some item not (or nothing left to send, or an instance has
 * more Dead rows than one bulk takes of it), 4 awaiting approval.
 */
export async function bulkRequeue(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('requeue', args.options, [
    'reason',
    'dry-run',
    'idempotency-key',
    'instance',
    'dead',
    'destination',
    'limit',
  ]);
  const every = args.options.dead === true;
  if (!every && (args.options.destination !== undefined || args.options.limit !== undefined))
    throw usageError('requeue takes --destination and --limit only with --dead (every Dead row, longest dead first)');
  const limit = intOption('limit', args.options.limit, 1, maxDeadOutboxRows) ?? 100;
  const ids = args.positionals.slice(1).map((id) => idArgument('requeue', 'outbox', id).toLowerCase());
  const instances = (args.options.instance ?? []).map((id) => idArgument('requeue --instance', 'instance', id));
  const dryRun = args.options['dry-run'] === true;
  const reason = args.options.reason?.trim();
  if (!dryRun && !reason)
    throw usageError(
      'outbox.requeue needs --reason "<why>": it goes on each audit row (or preview first with --dry-run)',
    );
  const client = ctx.client();
  const { dead, leftOut, more } = await gather(client, ids, instances);
  if (every)
    for (const row of await client.query<Row[]>('outbox.dead', { limit, destination: args.options.destination }))
      if (!dead.some((r) => r.id === row.id)) dead.push(row);
  const idempotencyKey = args.options['idempotency-key'] ?? `cli-${randomUUID()}`;
  const bulk = {
    kind: 'outbox.requeue',
    reason: reason ?? 'preview',
    idempotencyKey,
    items: dead.map((r) => ({ target: { outboxId: r.id }, expected: { status: r.status, attempts: r.attempts } })),
  };
  const leftOutLines = leftOut.map((l) => `  left out    ${l.id} ${l.why}`);
  const headline = (verb: string) =>
    `outbox.requeue ${verb} ${dead.length} Dead row${dead.length === 1 ? '' : 's'}${
      leftOut.length > 0 ? `; ${leftOut.length} left out` : ''
    }`;
  // "requeued 2 of 3 Dead rows; 1 not requeued (1 conflict)": what a partial bulk did, counted (review 48).
  const partialHeadline = (verb: string, done: number, rest: string) =>
    `outbox.requeue ${verb} ${done} of ${dead.length} Dead row${dead.length === 1 ? '' : 's'}; ${rest}${
      leftOut.length > 0 ? `; ${leftOut.length} left out` : ''
    }`;
  const json = (answer: unknown) => ({ command: bulk, leftOut, ...(answer as object) });
  if (dead.length === 0)
    throw new CliError(
      exitCodes.refused,
      `nothing to requeue: no Dead row ${every ? 'in the outbox' : 'among the ones named'}; nothing was sent`,
      {
        leftOut,
      },
    );

  if (dryRun) {
    const previews = await client.query<PreviewItem[]>('repairs.previewBulk', bulk);
    const would = previews.filter((p) => !('notFound' in p) && p.expectedHolds && p.applicable).length;
    const all = would === dead.length;
    return {
      exitCode: all && more.length === 0 ? exitCodes.done : exitCodes.refused,
      json: json({ preview: previews }),
      human: [
        `${all ? headline('would requeue') : partialHeadline('would requeue', would, `${dead.length - would} would not`)} (dry run: nothing written)`,
        ...dead.map((r, i) => `  ${r.id}  ${r.type} → ${r.destination}, ${previewText(previews[i])}`),
        ...leftOutLines,
        `  each goes out again with its message id on the publisher's next pass; its attempts count again from 0`,
      ],
    };
  }

  let answer: BulkAnswer;
  try {
    answer = await client.mutate<BulkAnswer>('repairs.applyBulk', bulk);
  } catch (err) {
    if (err instanceof CliError && err.exitCode === exitCodes.error)
      throw new CliError(
        err.exitCode,
        `${err.message}; to retry exactly this bulk add --idempotency-key ${idempotencyKey} (rows it requeued already are Pending now and left out)`,
        err.body,
      );
    throw err;
  }
  const retry = `  to repeat it without a second effect: --idempotency-key ${idempotencyKey}`;
  if ('items' in answer) {
    const all = answer.applied === answer.items.length;
    // Only what was applied is counted as requeued; the rest by outcome (review 48).
    const notApplied = answer.items.filter((i) => i.outcome !== 'applied');
    const outcomes = [...new Set(notApplied.map((i) => i.outcome))]
      .map((o) => `${notApplied.filter((i) => i.outcome === o).length} ${o}`)
      .join(', ');
    return {
      exitCode: answer.items.some((i) => i.outcome === 'failed')
        ? exitCodes.error
        : all && more.length === 0
          ? exitCodes.done
          : exitCodes.refused,
      json: json({ result: answer }),
      human: [
        `${all ? headline('requeued') : partialHeadline('requeued', answer.applied, `${notApplied.length} not requeued (${outcomes})`)}: applied to ${answer.applied} of ${answer.items.length}`,
        ...answer.items.map(
          (i) =>
            `  ${i.target.id}  ${i.outcome}${i.repairId ? `, audit row ${i.repairId}` : ''}${i.message ? `: ${i.message}` : ''}`,
        ),
        ...leftOutLines,
        retry,
      ],
    };
  }
  const waiting = answer.status === 'awaiting_approval';
  return {
    exitCode: waiting ? exitCodes.awaitingApproval : answer.status === 'applied' ? exitCodes.done : exitCodes.refused,
    json: json({ result: answer }),
    human: [
      waiting
        ? `${headline('over')} is waiting for another operator's approval: nothing changes until it is approved`
        : `${headline('over')} was ${answer.status === 'applied' ? 'approved and applied' : `not applied (${answer.status})`}; this key's draft was decided`,
      `  approval    ${answer.approvalId}: another operator approves or rejects it (console: Approvals; CLI: sagaflow approve / reject)`,
      ...leftOutLines,
      retry,
    ],
  };
}

/**
 * The named rows (each read now) and every Dead row of the named instances, read by their own query
 * (`outbox.dead` of the instance, not the instance page's newest rows: review 48, ADR 0122), at most
 * `maxDeadOutboxRows` of an instance, the longest dead first; the Dead ones to send, the others left
 * out. `more` names the instances with more Dead rows than that.
 */
async function gather(
  client: ControlClient,
  ids: string[],
  instances: string[],
): Promise<{ dead: Row[]; leftOut: { id: string; why: string }[]; more: string[] }> {
  const dead = new Map<string, Row>();
  const more: string[] = [];
  if (ids.length === 0 && instances.length === 0) return { dead: [], leftOut: [], more };
  const leftOut: { id: string; why: string }[] = [];
  for (const id of new Set(ids)) {
    const row = await client.query<Row>('outbox.get', { id }).catch((err: unknown) => {
      if (err instanceof CliError && (err.body as { error?: { httpStatus?: number } })?.error?.httpStatus === 404)
        return null;
      throw err;
    });
    if (row?.status === 'Dead') dead.set(row.id, row);
    else leftOut.push({ id, why: leftOutWhy(row) });
  }
  for (const instanceId of new Set(instances.map((i) => i.toLowerCase()))) {
    const rows = await client.query<DeadRow[]>('outbox.dead', { instanceId, limit: maxDeadOutboxRows });
    if (rows.length === 0) leftOut.push({ id: `instance ${instanceId}`, why: 'has no Dead outbox row' });
    for (const row of rows) dead.set(row.id, row);
    const last = rows.at(-1);
    if (rows.length === maxDeadOutboxRows && last) {
      const next = await client.query<DeadRow[]>('outbox.dead', {
        instanceId,
        limit: 1,
        after: { availableAt: last.availableAt, id: last.id },
      });
      if (next.length > 0) {
        more.push(instanceId);
        leftOut.push({
          id: `instance ${instanceId}`,
          why: `has more than ${maxDeadOutboxRows} Dead rows: these are its ${maxDeadOutboxRows} longest dead; run the same command again once they are requeued for the rest`,
        });
      }
    }
  }
  return { dead: [...dead.values()], leftOut, more };
}

function previewText(p: PreviewItem | undefined): string {
  if (!p) return 'no preview';
  if ('notFound' in p) return 'not found';
  if (!p.expectedHolds) return `changed: now ${JSON.stringify(p.actual)}`;
  return p.applicable ? 'would apply' : `cannot apply: ${p.blockers.join('; ')}`;
}
