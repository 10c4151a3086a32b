import type { RepairCommandInfo } from '@sagaflow/engine';
import type { CliContext, CommandOutcome } from '../cli-context.ts';
import type { ApiOutputs } from '../control-client.ts';
import { exitCodes } from '../exit-codes.ts';
import { age, cell, formatTable } from '../format/format-table.ts';
import { allowOnly, idArgument, intOption, noMorePositionals, usageError, type ParsedArgs } from '../parse-cli-args.ts';

const done = (json: unknown, human: string[]): CommandOutcome => ({ exitCode: exitCodes.done, json, human });

function order(value: string | undefined): 'newest' | 'stalest' | undefined {
  if (value === undefined || value === 'newest' || value === 'stalest') return value;
  throw usageError(`--order must be newest or stalest, got "${value}"`);
}

/** The page filters both lists share. */
function pageInput(o: ParsedArgs['options']) {
  return {
    ...(o.status ? { status: o.status } : {}),
    ...(o.search !== undefined ? { search: o.search } : {}),
    ...(o.order !== undefined ? { order: order(o.order) } : {}),
    ...(o.limit !== undefined ? { limit: intOption('limit', o.limit, 1, 200) } : {}),
    ...(o.cursor !== undefined ? { cursor: o.cursor } : {}),
  };
}

/**
 * One argument as a POSIX shell reads it back: as is when it holds only characters no shell treats
 * specially, else in single quotes (an embedded `'` as `'\''`).
 */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

/**
 * "Next page:" with the same command line and the cursor, when there is one; each argument quoted for a
 * shell, so pasting the line runs the same query (review 36: `--search 'order 42'`).
 */
export function nextPage(argv: readonly string[], cursor: string | null): string[] {
  if (cursor === null) return [];
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--cursor') i++;
    else if (!argv[i]?.startsWith('--cursor=')) kept.push(argv[i] ?? '');
  }
  return ['', `next page: sagaflow ${[...kept, '--cursor', cursor].map(shellQuote).join(' ')}`];
}

export async function whoami(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('whoami', args.options, []);
  noMorePositionals('whoami', args.positionals.slice(1));
  const me = await ctx.client().query<ApiOutputs['auth']['me']>('auth.me');
  return done(me, [
    `${me.operator.name} (${me.operator.displayName}), role ${me.operator.role}`,
    me.token
      ? `token "${me.token.name}" (${me.token.hint}…), expires ${me.expiresAt ?? 'never'}`
      : `session, expires ${me.expiresAt}`,
    `control plane ${ctx.settings.url}`,
  ]);
}

export async function listRuns(ctx: CliContext, args: ParsedArgs, argv: readonly string[]): Promise<CommandOutcome> {
  allowOnly('runs list', args.options, [
    'status',
    'flow',
    'stuck',
    'stuck-reason',
    'search',
    'order',
    'limit',
    'cursor',
  ]);
  noMorePositionals('runs list', args.positionals.slice(2));
  const o = args.options;
  const page = await ctx.client().query<ApiOutputs['runs']['page']>('runs.page', {
    ...pageInput(o),
    ...(o.flow !== undefined ? { flowName: o.flow } : {}),
    ...(o.stuck ? { stuckOnly: true } : {}),
    ...(o['stuck-reason'] !== undefined ? { stuckReason: o['stuck-reason'] } : {}),
  });
  const now = Date.now();
  return done(page, [
    ...(page.items.length === 0
      ? ['no runs match']
      : formatTable(
          ['RUN', 'FLOW', 'STATUS', 'UPDATED', 'STUCK / WAITING'],
          page.items.map((r) => [
            r.id,
            `${r.flowName}@${r.flowVersion}`,
            r.status,
            age(r.updatedAt, now),
            cell(r.stuckReason ?? (r.waitingFor ? `waiting for ${r.waitingFor}` : '')),
          ]),
        )),
    ...nextPage(argv, page.nextCursor),
  ]);
}

export async function showRun(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('run show', args.options, []);
  const [, , id, ...rest] = args.positionals;
  noMorePositionals('run show', rest);
  const runId = idArgument('run show', 'run', id);
  const d = await ctx.client().query<ApiOutputs['runs']['get']>('runs.get', { id: runId });
  const r = d.run;
  return done(d, [
    `run ${r.id}  ${r.flowName}@${r.flowVersion}  ${r.status}`,
    ...(r.stuckReason ? [`stuck: ${r.stuckReason}`] : []),
    ...(r.waitingFor ? [`waiting for: ${r.waitingFor}`] : []),
    ...(r.businessKey ? [`business key: ${r.businessKey}`] : []),
    `created ${r.createdAt}, updated ${r.updatedAt}${r.finishedAt ? `, finished ${r.finishedAt}` : ''}`,
    ...(r.error !== null ? [`error: ${cell(r.error, 300)}`] : []),
    ...leftUndoneLines(r.leftUndone),
    '',
    ...(d.actions.length === 0
      ? ['no steps yet']
      : formatTable(
          ['STEP', 'KIND', 'NAME', 'STATUS', 'ATTEMPTS'],
          d.actions.map((a) => [
            String(a.sequence),
            a.kind,
            a.name,
            // ADR 0091: a step still Running on a run that has ended keeps its status; whether it took effect is not known.
            a.status === 'Running' && r.finishedAt ? 'Running (run ended: outcome unknown)' : a.status,
            `${a.attempts}/${a.maxAttempts}`,
          ]),
        )),
    ...(d.older.steps ? [`(the newest ${d.actions.length} steps; the console's run page loads older ones)`] : []),
    ...(d.compensations.length > 0
      ? [
          '',
          ...formatTable(
            // LEVEL.ORDINAL is what `reclaim --compensation` takes.
            ['COMPENSATES STEP', 'LEVEL.ORDINAL', 'NAME', 'STATUS', 'ATTEMPTS'],
            d.compensations.map((c) => [
              String(c.actionSequence),
              `${c.rollbackLevel}.${c.ordinal}`,
              c.name,
              c.status,
              `${c.attempts}/${c.maxAttempts}`,
            ]),
          ),
        ]
      : []),
    '',
    `last events: ${
      d.events
        .slice(-5)
        .map((e) => e.type)
        .join(', ') || 'none'
    }`,
    ...(d.anomalies.length > 0 ? [`anomalies: ${d.anomalies.map((a) => a.code).join(', ')}`] : []),
    r.safeRepairs.length > 0
      ? `safe repairs now: ${r.safeRepairs.join(', ')} (e.g. sagaflow ${cliNameOf(r.safeRepairs[0] ?? '')} ${r.id} --reason "…")`
      : 'no repair is needed or safe for this status',
  ]);
}

type LeftUndoneView = ApiOutputs['runs']['get']['run']['leftUndone'];

/**
 * What a closed run left behind (ADR 0091, 0124), on lines of its own, as the console's run page says it:
 * the steps in flight first (whether each took effect is not known), then the completed steps nobody will
 * undo, then the compensation that failed. Not inside the error, which is cut at 300 characters.
 */
export function leftUndoneLines(l: LeftUndoneView): string[] {
  if (!l) return [];
  const lines: string[] = [];
  const inFlight = l.in_flight ?? [];
  if (inFlight.length > 0)
    lines.push(
      `left in flight (outcome unknown, check whether each took effect): ${inFlight
        .map((s) =>
          s.kind === 'compensation' ? `compensation ${s.name} of step ${s.sequence}` : `step ${s.sequence} ${s.name}`,
        )
        .join(', ')}`,
    );
  if (l.steps.length > 0)
    lines.push(
      `left undone (completed, not compensated): ${l.steps
        .map((s) => `step ${s.sequence} ${s.name}${s.compensation ? ` (compensation ${s.compensation})` : ''}`)
        .join(', ')}`,
    );
  if (l.compensation_failed)
    lines.push(
      `compensation failed: ${l.compensation_failed.name} of step ${l.compensation_failed.sequence}: ${l.compensation_failed.message}`,
    );
  if (l.plan_error) lines.push(`(its compensations could not be named: ${l.plan_error})`);
  return lines;
}

/** The CLI command an operator types for a catalogue kind. */
export function cliNameOf(kind: string): string {
  const names: Record<string, string> = {
    'run.kick': 'kick',
    'run.retry_step': 'retry',
    'run.reclaim_step': 'reclaim',
    'run.cancel': 'cancel',
    'run.terminate': 'terminate',
    'run.expire': 'expire',
    'run.signal': 'signal',
    'run.complete_step': 'complete-step',
    'run.resume_from_step': 'resume-from',
    'instance.release': 'release',
    'instance.command': 'command',
    'instance.force_transition': 'force-transition',
    'outbox.requeue': 'requeue',
  };
  return names[kind] ?? `repair ${kind}`;
}

export async function listInstances(
  ctx: CliContext,
  args: ParsedArgs,
  argv: readonly string[],
): Promise<CommandOutcome> {
  allowOnly('instances list', args.options, [
    'status',
    'process',
    'state',
    'failing',
    'search',
    'order',
    'limit',
    'cursor',
  ]);
  noMorePositionals('instances list', args.positionals.slice(2));
  const o = args.options;
  const page = await ctx.client().query<ApiOutputs['instances']['page']>('instances.page', {
    ...pageInput(o),
    ...(o.process !== undefined ? { processName: o.process } : {}),
    ...(o.state !== undefined ? { state: o.state } : {}),
    ...(o.failing ? { failingOnly: true } : {}),
  });
  const now = Date.now();
  return done(page, [
    ...(page.items.length === 0
      ? ['no instances match']
      : formatTable(
          ['INSTANCE', 'PROCESS', 'STATUS', 'STATE', 'UPDATED', 'FAILING ON'],
          page.items.map((i) => [
            i.id,
            i.processName,
            i.status,
            i.currentState,
            age(i.updatedAt, now),
            cell(failingOn(i)),
          ]),
        )),
    ...nextPage(argv, page.nextCursor),
  ]);
}

/**
 * What an instance is failing on, for a list row: its failure record (a message, seed 002), else its
 * timeout that keeps failing (ADR 0127) with its attempts.
 */
export function failingOn(i: ApiOutputs['instances']['page']['items'][number]): string {
  if (i.failure) return `${i.failure.errorType}: ${i.failure.message}`;
  const t = i.failingTimeout;
  if (t) return `timeout ${t.name} (${t.attempts} ${t.attempts === 1 ? 'attempt' : 'attempts'}): ${t.lastError}`;
  return '';
}

export async function showInstance(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('instance show', args.options, []);
  const [, , id, ...rest] = args.positionals;
  noMorePositionals('instance show', rest);
  const instanceId = idArgument('instance show', 'instance', id);
  const d = await ctx.client().query<ApiOutputs['instances']['get']>('instances.get', { id: instanceId });
  const i = d.instance;
  return done(d, [
    `instance ${i.id}  ${i.processName}  ${i.status}  in ${i.currentState} (version ${i.version})`,
    `correlation key: ${i.correlationKey}`,
    `created ${i.createdAt}, updated ${i.updatedAt}${i.nextTimerDueAt ? `, next timer ${i.nextTimerDueAt}` : ''}`,
    ...(i.failure
      ? [`failing on: ${i.failure.errorType}: ${i.failure.message} (since ${i.failure.firstFailedAt})`]
      : []),
    ...(i.failingTimeout
      ? [
          `timeout failing: ${i.failingTimeout.name}, ${i.failingTimeout.attempts} attempts${
            i.failingTimeout.firstFailedAt ? ` since ${i.failingTimeout.firstFailedAt}` : ''
          }, next try ${i.failingTimeout.nextRetryAt ?? 'when due'}: ${i.failingTimeout.lastError}`,
        ]
      : []),
    '',
    ...formatTable(
      ['AT', 'FROM', 'TO', 'MESSAGE', 'OUTCOME'],
      d.history.slice(-10).map((h) => [h.at, cell(h.from), cell(h.to), cell(h.messageType), h.outcome]),
    ),
    ...(d.history.length > 10 || d.historyTruncated
      ? [`(the newest 10 transitions; older ones exist: the console's instance page shows them all)`]
      : []),
    ...(d.operatorCommands.length > 0
      ? [
          '',
          ...formatTable(
            ['COMMAND', 'ACCEPTED NOW', 'FROM → TO'],
            d.operatorCommands.map((c) => [c.name, c.acceptedNow ? 'yes' : 'no', `${c.from.join('|')} → ${c.to}`]),
          ),
          `run one with: sagaflow command ${i.id} <command> --input '{…}' --reason "…"`,
        ]
      : []),
    ...(i.status === 'QUARANTINED' ? [`release it with: sagaflow release ${i.id} --retry|--skip --reason "…"`] : []),
    ...deadOutboxLines(d.outbox, d.deadOutboxNotListed, i.id),
  ]);
}

/**
 * The instance's Dead outbox rows (they need a person), and how to send one again. `instances.get` lists
 * every Dead row however old (up to 500 older than its newest 100 rows) and counts the ones beyond (ADR 0122).
 */
function deadOutboxLines(
  outbox: ApiOutputs['instances']['get']['outbox'],
  notListed: number,
  instanceId: string,
): string[] {
  const dead = outbox.filter((o) => o.status === 'Dead');
  if (dead.length === 0 && notListed === 0) return [];
  return [
    '',
    ...formatTable(
      ['DEAD OUTBOX ROW', 'MESSAGE', 'TO', 'ATTEMPTS', 'LAST ERROR'],
      dead.map((o) => [o.id, o.type, o.destination, String(o.attempts), cell(o.lastError)]),
    ),
    ...(notListed > 0
      ? [
          `(${notListed} more Dead row${notListed === 1 ? '' : 's'} not listed: sagaflow requeue --instance ${instanceId} --dry-run finds them)`,
        ]
      : []),
    `send one again, once its downstream is fixed: sagaflow requeue <outbox-row-id> --reason "…"`,
  ];
}

export async function listCatalogue(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('repairs', args.options, []);
  noMorePositionals('repairs', args.positionals.slice(1));
  const catalogue = await ctx.client().query<Record<string, RepairCommandInfo>>('repairs.catalogue');
  return done(
    catalogue,
    formatTable(
      ['KIND', 'CLI', 'TARGET', 'NOTES', 'WHAT IT DOES'],
      Object.entries(catalogue).map(([kind, c]) => [
        kind,
        cliNameOf(kind),
        c.target,
        [c.destructive ? 'destructive' : '', c.adminOnly ? 'admin' : ''].filter(Boolean).join(',') || '-',
        c.description,
      ]),
    ),
  );
}
