import { parseArgs } from 'node:util';
import { CliError } from './cli-error.ts';
import { exitCodes } from './exit-codes.ts';

/** Every option any command takes; which command takes which is checked by `allowOnly`. */
const optionSpec = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  // repairs
  reason: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'idempotency-key': { type: 'string' },
  step: { type: 'string' },
  compensation: { type: 'string' },
  'expect-status': { type: 'string' },
  'expect-step-status': { type: 'string' },
  'expect-attempts': { type: 'string' },
  'expect-state': { type: 'string' },
  'expect-version': { type: 'string' },
  compensate: { type: 'boolean' },
  'cleanup-seconds': { type: 'string' },
  payload: { type: 'string' },
  output: { type: 'string' },
  retry: { type: 'boolean' },
  skip: { type: 'boolean' },
  input: { type: 'string' },
  params: { type: 'string' },
  instance: { type: 'string', multiple: true },
  dead: { type: 'boolean' },
  destination: { type: 'string' },
  // lists
  status: { type: 'string', multiple: true },
  flow: { type: 'string' },
  process: { type: 'string' },
  state: { type: 'string' },
  stuck: { type: 'boolean' },
  'stuck-reason': { type: 'string' },
  failing: { type: 'boolean' },
  search: { type: 'string' },
  order: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  // tokens and operators
  name: { type: 'string' },
  operator: { type: 'string' },
  'expires-in-days': { type: 'string' },
  all: { type: 'boolean' },
  revoked: { type: 'boolean' },
  role: { type: 'string' },
  'display-name': { type: 'string' },
  'password-stdin': { type: 'boolean' },
  'sign-in': { type: 'string' },
  local: { type: 'boolean' },
  // local sweeps and retention
  doctor: { type: 'boolean' },
  'older-than': { type: 'string' },
  'batch-size': { type: 'string' },
} as const;

export type OptionName = keyof typeof optionSpec;
export type Options = ReturnType<typeof parseArgs<{ options: typeof optionSpec; allowPositionals: true }>>['values'];

export interface ParsedArgs {
  positionals: string[];
  options: Options;
}

export const usageError = (message: string) => new CliError(exitCodes.usage, message);

/** Splits a command line into positionals and options; an unknown option is a usage error naming it. */
export function parseCliArgs(argv: readonly string[]): ParsedArgs {
  try {
    const { positionals, values, tokens } = parseArgs({
      args: [...argv],
      options: optionSpec,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
    refuseRepeats(tokens);
    return { positionals, options: values };
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw usageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

/**
 * A single-valued option given twice (`--step 1 --step 2`, two `--idempotency-key`s) is ambiguous: `parseArgs`
 * would keep the last one silently (review 36). It is a usage error naming the option, for every command,
 * before anything is sent. Options documented as repeatable (`--status`, `--instance`) are `multiple`; a
 * flag given twice (`--json --json`) says the same thing twice and is let through.
 */
function refuseRepeats(tokens: readonly { kind: string; name?: string; value?: string | undefined }[]): void {
  const seen = new Map<string, string[]>();
  for (const t of tokens) {
    if (t.kind !== 'option' || t.name === undefined) continue;
    const spec = optionSpec[t.name as OptionName] as { type: string; multiple?: boolean };
    if (spec.type !== 'string' || spec.multiple === true) continue;
    const values = seen.get(t.name) ?? [];
    values.push(t.value ?? '');
    seen.set(t.name, values);
    if (values.length > 1)
      throw usageError(
        `--${t.name} is given twice (${values.map((v) => JSON.stringify(v)).join(', ')}); ` +
          'it takes one value: give it once',
      );
  }
}

/** Refuses options this command does not take (`--json` and `--help` are always allowed). */
export function allowOnly(command: string, options: Options, allowed: readonly OptionName[]): void {
  const extra = Object.keys(options).filter(
    (k) => k !== 'json' && k !== 'help' && !(allowed as readonly string[]).includes(k),
  );
  if (extra.length > 0)
    throw usageError(`${command} does not take ${extra.map((k) => `--${k}`).join(', ')}; see \`sagaflow help\``);
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The one positional id a command needs (a run's, an instance's or an outbox row's UUID). */
export function idArgument(command: string, what: string, value: string | undefined): string {
  const a = /^[aeiou]/.test(what) ? 'an' : 'a';
  const where = what === 'run' ? 'runs list' : what === 'outbox' ? 'instance show <instance-id>' : 'instances list';
  if (value === undefined)
    throw usageError(`${command} needs ${a} ${what} id (a UUID; find it with \`sagaflow ${where}\`)`);
  if (!uuid.test(value)) throw usageError(`${what}-id must be ${a} ${what}'s UUID, got "${value}"`);
  return value;
}

/** An integer option within bounds, or undefined when absent. */
export function intOption(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max)
    throw usageError(`--${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

/** A JSON option, or undefined when absent. */
export function jsonOption(name: string, value: string | undefined): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch (err) {
    throw usageError(
      `--${name} must be JSON (${(err as Error).message}); quote it for the shell, e.g. --${name} '{"a":1}'`,
    );
  }
}

/** Refuses positionals beyond the ones a command takes. */
export function noMorePositionals(command: string, rest: readonly string[]): void {
  if (rest.length > 0) throw usageError(`${command}: unexpected ${rest.join(' ')}; see \`sagaflow help\``);
}
