import type { CliContext, CommandOutcome } from '../cli-context.ts';
import type { ApiOutputs } from '../control-client.ts';
import { exitCodes } from '../exit-codes.ts';
import { age, formatTable } from '../format/format-table.ts';
import { allowOnly, noMorePositionals, usageError, type ParsedArgs } from '../parse-cli-args.ts';
import { readPassword } from './read-password.ts';

const roles = ['viewer', 'operator', 'admin'];

/** `create-operator <name> --role R` (admin): the password asked for, or read from stdin. */
export async function createOperatorCommand(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('create-operator', args.options, ['role', 'display-name', 'password-stdin']);
  const [, name, ...rest] = args.positionals;
  noMorePositionals('create-operator', rest);
  if (name === undefined) throw usageError("create-operator needs the new operator's sign-in name");
  const role = args.options.role;
  if (role === undefined || !roles.includes(role))
    throw usageError(`create-operator needs --role ${roles.join('|')}${role === undefined ? '' : `, got "${role}"`}`);
  const client = ctx.client();
  const password = await readPassword(
    ctx.io,
    args.options['password-stdin'] === true,
    `password for the new operator ${name} (12 characters or more): `,
  );
  const created = await client.mutate<ApiOutputs['operators']['create']>('operators.create', {
    name,
    displayName: args.options['display-name'] ?? name,
    role,
    password,
  });
  return {
    exitCode: exitCodes.done,
    json: { ...created, name: name.trim().toLowerCase(), role },
    human: [
      `operator ${name.trim().toLowerCase()} created with role ${role} (id ${created.id})`,
      `they sign in to the console with that password, or make a CLI token: sagaflow token create --name <name> --sign-in ${name.trim().toLowerCase()}`,
    ],
  };
}

/** `operators list` (admin): every operator, its role, and whether it is disabled. */
export async function listOperatorsCommand(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('operators list', args.options, []);
  noMorePositionals('operators list', args.positionals.slice(2));
  const operators = await ctx.client().query<ApiOutputs['operators']['list']>('operators.list');
  const now = Date.now();
  return {
    exitCode: exitCodes.done,
    json: operators,
    human: formatTable(
      ['NAME', 'DISPLAY NAME', 'ROLE', 'STATE', 'CREATED'],
      operators.map((o) => [o.name, o.displayName, o.role, o.disabled ? 'disabled' : 'enabled', age(o.createdAt, now)]),
    ),
  };
}

/**
 * `operator set-role <name> <role>`, `operator disable <name>`, `operator enable <name>` (admin): one
 * change, audited; an admin changes no one but others (operators.setRole / setDisabled, ADR 0105).
 */
export async function changeOperatorCommand(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  const [, verb, name, ...rest] = args.positionals;
  allowOnly(`operator ${verb ?? ''}`.trim(), args.options, []);
  if (verb !== 'set-role' && verb !== 'disable' && verb !== 'enable')
    throw usageError('operator takes set-role <name> <role>, disable <name> or enable <name>');
  if (name === undefined) throw usageError(`operator ${verb} needs the operator's sign-in name`);
  const role = verb === 'set-role' ? rest.shift() : undefined;
  noMorePositionals(`operator ${verb}`, rest);
  if (verb === 'set-role' && (role === undefined || !roles.includes(role)))
    throw usageError(
      `operator set-role needs a role: ${roles.join('|')}${role === undefined ? '' : `, got "${role}"`}`,
    );
  const changed =
    verb === 'set-role'
      ? await ctx.client().mutate<ApiOutputs['operators']['setRole']>('operators.setRole', { name, role })
      : await ctx.client().mutate<ApiOutputs['operators']['setDisabled']>('operators.setDisabled', {
          name,
          disabled: verb === 'disable',
        });
  return {
    exitCode: exitCodes.done,
    json: changed,
    human: [
      verb === 'set-role'
        ? `${changed.name} is ${changed.role} now: it applies from their next request`
        : changed.disabled
          ? `${changed.name} is disabled: their sessions ended; their API tokens are refused while disabled`
          : `${changed.name} is enabled again (role ${changed.role})`,
    ],
  };
}
