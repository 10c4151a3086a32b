import type { CliContext, CommandOutcome } from '../cli-context.ts';
import type { ApiOutputs } from '../control-client.ts';
import { exitCodes } from '../exit-codes.ts';
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
