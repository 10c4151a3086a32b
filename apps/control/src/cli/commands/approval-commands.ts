import type { RepairPreview } from '@sagaflow/engine';
import { CliError } from '../cli-error.ts';
import type { CliContext, CommandOutcome } from '../cli-context.ts';
import type { ApiOutputs, ControlClient } from '../control-client.ts';
import { exitCodes } from '../exit-codes.ts';
import { age, cell, formatTable } from '../format/format-table.ts';
import { effectLines } from '../format/format-repair.ts';
import { allowOnly, idArgument, intOption, noMorePositionals, usageError, type ParsedArgs } from '../parse-cli-args.ts';
import { nextPage } from './read-commands.ts';

type Approval = ApiOutputs['approvals']['get'];

/** What a decided approval's row says happened, for people. */
function decision(a: Approval): string {
  if (a.status === 'pending') return `waits for a second operator until ${a.expiresAt}`;
  if (a.status === 'applying') return `approved by ${a.decidedBy} at ${a.decidedAt}; its items are being applied`;
  if (a.status === 'expired') return `expired at ${a.expiresAt} without a decision; nothing was applied`;
  const by = `by ${a.decidedBy} at ${a.decidedAt}`;
  if (a.status === 'rejected') return `rejected ${by}: ${a.decisionReason ?? ''}; nothing was applied`;
  if (a.status === 'applied') return `approved and applied ${by}`;
  return `approved ${by}, but not applied (${a.status}): ${a.status === 'conflict' ? 'the state had moved since the draft' : 'the target could not take it'}`;
}

const target = (a: Approval) => (a.bulk ? `${a.target.id} targets` : `${a.target.type} ${a.target.id}`);

/**
 * `approvals list`: the approvals queue, newest first; pending by default (what waits for a second
 * operator), or `--status` one status, `decided` (every status but pending) or `all`.
 */
export async function listApprovals(
  ctx: CliContext,
  args: ParsedArgs,
  argv: readonly string[],
): Promise<CommandOutcome> {
  allowOnly('approvals list', args.options, ['status', 'limit', 'cursor']);
  noMorePositionals('approvals list', args.positionals.slice(2));
  const o = args.options;
  if ((o.status?.length ?? 0) > 1) throw usageError('approvals list takes one --status (or --status decided / all)');
  // The control plane names the statuses it takes when one is not (a 400 on input.status: exit 64).
  const status = o.status?.[0] ?? 'pending';
  const page = await ctx.client().query<ApiOutputs['approvals']['list']>('approvals.list', {
    ...(status === 'all' ? {} : { status }),
    ...(o.limit !== undefined ? { limit: intOption('limit', o.limit, 1, 100) } : {}),
    ...(o.cursor !== undefined ? { cursor: o.cursor } : {}),
  });
  const now = Date.now();
  return {
    exitCode: exitCodes.done,
    json: page,
    human: [
      ...(page.items.length === 0
        ? [status === 'pending' ? 'no approval is waiting' : `no approvals match --status ${status}`]
        : formatTable(
            ['APPROVAL', 'COMMAND', 'TARGET', 'STATUS', 'DRAFTER', 'DRAFTED', 'REASON'],
            page.items.map((a) => [
              a.id,
              a.command,
              target(a),
              a.status,
              a.drafter,
              age(a.createdAt, now),
              cell(a.reason, 40),
            ]),
          )),
      ...(page.items.some((a) => a.status === 'pending')
        ? [
            '',
            'look with `sagaflow approval show <id>`, then `sagaflow approve <id>` or `sagaflow reject <id> --reason TEXT`',
          ]
        : []),
      ...nextPage(argv, page.nextCursor),
    ],
  };
}

/**
 * `approval show <id>`: the drafted command, why, and what became of it. A pending one (not a bulk) is
 * also previewed again against the state now, as the console does (ADR 0106), so the approver sees
 * whether it would still apply; a viewer, who may not preview, sees the draft-time preview only.
 */
export async function showApproval(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('approval show', args.options, []);
  const [, , id, ...rest] = args.positionals;
  noMorePositionals('approval show', rest);
  const approvalId = idArgument('approval show', 'approval', id);
  const client = ctx.client();
  const a = await client.query<Approval>('approvals.get', { id: approvalId });
  const now = a.status === 'pending' && !a.bulk ? await previewNow(client, a) : null;
  return {
    exitCode: exitCodes.done,
    json: { approval: a, ...(now ? { previewNow: now } : {}) },
    human: [
      `approval ${a.id}  ${a.command} on ${target(a)}  ${a.status}`,
      `  drafted     by ${a.drafter} at ${a.createdAt}: ${a.reason}`,
      `  decision    ${decision(a)}`,
      ...(a.bulk ? bulkLines(a) : []),
      ...(now === null
        ? []
        : now === 'forbidden'
          ? ['  now         (previewing it again needs the operator role)']
          : [
              now.applicable
                ? '  now         it would apply to the state now:'
                : `  now         it would NOT apply now${now.expectedHolds ? '' : `: the state moved to ${JSON.stringify(now.actual)}`}`,
              ...now.blockers.map((b) => `  blocker     ${b}`),
              ...effectLines(now.effects),
            ]),
      ...(a.status === 'pending'
        ? ['', `decide: sagaflow approve ${a.id}   or   sagaflow reject ${a.id} --reason TEXT`]
        : []),
    ],
  };
}

function bulkLines(a: Approval): string[] {
  const items = (a.result as { items?: { target: { id: string }; outcome: string; message: string | null }[] } | null)
    ?.items;
  if (!items) return [];
  return items.map((i) => `  item        ${i.target.id}  ${i.outcome}${i.message ? `: ${i.message}` : ''}`);
}

/** The drafted command previewed against the state now, or `forbidden` for a role that may not preview. */
async function previewNow(client: ControlClient, a: Approval): Promise<RepairPreview | 'forbidden'> {
  // The payload as the engine stored it names its actor; the API sets the actor itself from the session.
  const { actor: _actor, via: _via, ...command } = a.payload as Record<string, unknown>;
  try {
    return await client.query<RepairPreview>('repairs.preview', command);
  } catch (err) {
    if (err instanceof CliError && err.exitCode === exitCodes.unauthorised) return 'forbidden';
    throw err;
  }
}

/**
 * A decision the approval refused changes nothing: exit 2, as a refused repair. A 409 with a repair's
 * body is the command's expected state that no longer held (the approval ended as conflict); any other
 * 409 is the approval itself, already decided or expired.
 */
function refusedDecision(err: unknown): never {
  if (!(err instanceof CliError)) throw err;
  const failure = (err.body as { error?: { httpStatus?: number; data?: { engineCode?: unknown } } } | null)?.error;
  // A busy target (ADR 0132) decided nothing: the approval stays pending (or, a bulk, applying) and the same
  // approve goes through once the other session lets go. An error, not a refusal to draft again.
  if (failure?.data?.engineCode === 'target_busy') throw new CliError(exitCodes.error, err.message, err.body);
  if (err.exitCode !== exitCodes.refused && failure?.httpStatus === 409)
    throw new CliError(exitCodes.refused, err.message, err.body);
  if (err.exitCode === exitCodes.refused)
    throw new CliError(
      err.exitCode,
      `${err.message}. The approval ended as conflict: draft the command again against the state now`,
      err.body,
    );
  throw err;
}

/**
 * `approve <id>`: applies the drafted command as the second operator (ADR 0020), still guarded by the
 * state it was drafted against. Exit 0 applied (a bulk: every item applied), 2 not applied (the state
 * moved, the approval was already decided or expired, a bulk item refused), 3 not yours to approve.
 */
export async function approveCommand(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('approve', args.options, []);
  const [, id, ...rest] = args.positionals;
  noMorePositionals('approve', rest);
  const approvalId = idArgument('approve', 'approval', id);
  const a = await ctx.client().mutate<Approval>('approvals.approve', { id: approvalId }).catch(refusedDecision);
  const items = (a.result as { applied?: number; items?: unknown[] } | null) ?? null;
  const allApplied = a.status === 'applied' && (!a.bulk || items?.applied === items?.items?.length);
  const effects = (a.result as { effects?: Parameters<typeof effectLines>[0] } | null)?.effects;
  return {
    exitCode: allApplied ? exitCodes.done : exitCodes.refused,
    json: a,
    human: [
      a.bulk
        ? `${a.command} over ${target(a)} approved: applied to ${items?.applied ?? 0} of ${items?.items?.length ?? 0}`
        : `${a.command} on ${target(a)} ${a.status === 'applied' ? 'approved and applied' : `approved but not applied (${a.status})`}`,
      `  drafted     by ${a.drafter}: ${a.reason}`,
      ...effectLines(effects),
      ...(a.bulk ? bulkLines(a) : []),
    ],
  };
}

/** `reject <id> --reason TEXT`: nothing is applied; the reason is kept on the approval and the trail. */
export async function rejectCommand(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('reject', args.options, ['reason']);
  const [, id, ...rest] = args.positionals;
  noMorePositionals('reject', rest);
  const approvalId = idArgument('reject', 'approval', id);
  const reason = args.options.reason?.trim();
  if (!reason) throw usageError('reject needs --reason TEXT: say why the command is rejected (the drafter reads it)');
  const a = await ctx.client().mutate<Approval>('approvals.reject', { id: approvalId, reason }).catch(refusedDecision);
  return {
    exitCode: exitCodes.done,
    json: a,
    human: [`${a.command} on ${target(a)} rejected: nothing was applied`, `  drafted     by ${a.drafter}: ${a.reason}`],
  };
}
