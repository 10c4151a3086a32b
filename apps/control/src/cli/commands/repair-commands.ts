import type { CliContext, CommandOutcome } from '../cli-context.ts';
import {
  allowOnly,
  idArgument,
  intOption,
  jsonOption,
  noMorePositionals,
  usageError,
  type OptionName,
  type ParsedArgs,
} from '../parse-cli-args.ts';
import { bulkRequeue, isBulkRequeue } from './bulk-requeue.ts';
import { compensationOption, repairOptions, runRepair, type RepairRequest } from './draft-repair.ts';

interface NamedRepair {
  /** The catalogue kind it drafts. */
  kind: string;
  /** A run's, an instance's or an outbox row's id comes first. */
  on: 'run' | 'instance' | 'outbox';
  /** Options beyond the common repair ones. */
  options: readonly OptionName[];
  /** The command's own parameters, from the positionals after the id and the options. */
  params(args: { rest: string[]; options: ParsedArgs['options']; command: string }): Record<string, unknown>;
}

const none = () => ({});
const cleanup = ({ options }: { options: ParsedArgs['options'] }) => {
  const seconds = intOption('cleanup-seconds', options['cleanup-seconds'], 0, 31_536_000);
  return seconds === undefined ? {} : { cleanupSeconds: seconds };
};

/** One positional parameter after the id (a signal's name, a command's name, a state). */
const one = (what: string, rest: string[], command: string) => {
  const [value, ...more] = rest;
  if (value === undefined) throw usageError(`${command} needs the ${what}; see \`sagaflow help\``);
  noMorePositionals(command, more);
  return value;
};

/**
 * The catalogue's commands by the names an operator types. Each only maps its command line to a
 * catalogue kind and parameters; drafting, expected state and output are shared (draft-repair.ts),
 * and `repair <kind>` reaches any kind, including ones added to the catalogue after this list.
 */
export const namedRepairs: Record<string, NamedRepair> = {
  kick: { kind: 'run.kick', on: 'run', options: [], params: none },
  retry: { kind: 'run.retry_step', on: 'run', options: ['step'], params: none },
  reclaim: { kind: 'run.reclaim_step', on: 'run', options: ['step', 'compensation'], params: none },
  // run.cancel is the cooperative cancel: the run's code compensates. --compensate says so explicitly.
  cancel: { kind: 'run.cancel', on: 'run', options: ['compensate', 'cleanup-seconds'], params: cleanup },
  terminate: { kind: 'run.terminate', on: 'run', options: [], params: none },
  expire: { kind: 'run.expire', on: 'run', options: ['cleanup-seconds'], params: cleanup },
  signal: {
    kind: 'run.signal',
    on: 'run',
    options: ['payload'],
    params: ({ rest, options, command }) => {
      const payload = jsonOption('payload', options.payload);
      return { signal: { name: one('signal name', rest, command), ...(payload === undefined ? {} : { payload }) } };
    },
  },
  'complete-step': {
    kind: 'run.complete_step',
    on: 'run',
    options: ['step', 'output'],
    params: ({ options, command }) => {
      if (options.output === undefined)
        throw usageError(`${command} needs --output JSON: the step's output, e.g. --output '{"chargeId":"ch_1"}'`);
      return { output: jsonOption('output', options.output) };
    },
  },
  'resume-from': { kind: 'run.resume_from_step', on: 'run', options: ['step'], params: none },
  release: {
    kind: 'instance.release',
    on: 'instance',
    options: ['retry', 'skip'],
    params: ({ options, command }) => {
      if (options.retry === options.skip)
        throw usageError(
          `${command} needs exactly one of --retry (handle the message it stopped on again) or --skip (skip it; its payload is kept)`,
        );
      return { mode: options.retry ? 'retry' : 'skip' };
    },
  },
  command: {
    kind: 'instance.command',
    on: 'instance',
    options: ['input'],
    params: ({ rest, options, command }) => {
      const input = jsonOption('input', options.input);
      return { command: one('command name', rest, command), ...(input === undefined ? {} : { input }) };
    },
  },
  'force-transition': {
    kind: 'instance.force_transition',
    on: 'instance',
    options: [],
    params: ({ rest, command }) => ({ to: one('state to move to', rest, command) }),
  },
  requeue: { kind: 'outbox.requeue', on: 'outbox', options: [], params: none },
};

/** A named repair (`kick <run-id> --reason ...`). */
export function namedRepair(ctx: CliContext, name: string, args: ParsedArgs): Promise<CommandOutcome> {
  const spec = namedRepairs[name];
  if (!spec) throw usageError(`unknown command "${name}"`);
  // Several rows, or the Dead rows of instances: one bulk (ADR 0104).
  if (name === 'requeue' && isBulkRequeue(args)) return bulkRequeue(ctx, args);
  allowOnly(name, args.options, [...repairOptions, ...spec.options]);
  const [id, ...rest] = args.positionals.slice(1);
  const request: RepairRequest = {
    kind: spec.kind,
    id: idArgument(name, spec.on, id),
    step: intOption('step', args.options.step, 1, 1_000_000),
    compensation: compensationOption(args.options.compensation),
    params: spec.params({ rest, options: args.options, command: name }),
  };
  if (spec.params === none) noMorePositionals(name, rest);
  return runRepair(ctx, request, args.options);
}

/** `repair <kind> <id> [--step N] [--params JSON]`: any catalogue command, its parameters as JSON. */
export function genericRepair(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('repair', args.options, [...repairOptions, 'step', 'params']);
  const [, kind, id, ...rest] = args.positionals;
  if (kind === undefined)
    throw usageError('repair needs a kind, e.g. `repair run.kick <run-id>`; list them with `sagaflow repairs`');
  noMorePositionals('repair', rest);
  const params = jsonOption('params', args.options.params) ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    throw usageError(`--params must be a JSON object of the command's own fields, e.g. --params '{"mode":"skip"}'`);
  return runRepair(
    ctx,
    {
      kind,
      id: idArgument('repair', targetOfKind(kind), id),
      step: intOption('step', args.options.step, 1, 1_000_000),
      params: params as Record<string, unknown>,
    },
    args.options,
  );
}

/** What the id after a kind names, by the kind's prefix (`outbox.requeue` takes an outbox row's id). */
function targetOfKind(kind: string): 'run' | 'instance' | 'outbox' {
  if (kind.startsWith('instance.')) return 'instance';
  if (kind.startsWith('outbox.')) return 'outbox';
  return 'run';
}
