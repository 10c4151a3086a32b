import { CliError } from '../cli-error.ts';
import type { CliContext, CommandOutcome } from '../cli-context.ts';
import { ControlClient, type ApiOutputs } from '../control-client.ts';
import { exitCodes } from '../exit-codes.ts';
import { age, formatTable } from '../format/format-table.ts';
import { allowOnly, idArgument, intOption, noMorePositionals, usageError, type ParsedArgs } from '../parse-cli-args.ts';
import { readPassword } from './read-password.ts';

type TokenView = ApiOutputs['tokens']['list'][number];

/**
 * `token create`: with SAGAFLOW_TOKEN it acts as that token's operator; with --sign-in NAME (the
 * first token, or after losing all of them) it signs in with the operator's password, creates the
 * token with that session and signs out again. The token is printed once.
 */
async function createToken(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('token create', args.options, ['name', 'operator', 'expires-in-days', 'sign-in', 'password-stdin']);
  noMorePositionals('token create', args.positionals.slice(2));
  const o = args.options;
  const name = o.name?.trim();
  if (!name)
    throw usageError('token create needs --name: what the token is for, e.g. --name laptop or --name ci-deploy');
  const input = {
    name,
    ...(o.operator !== undefined ? { operator: o.operator } : {}),
    ...(o['expires-in-days'] !== undefined
      ? { expiresInDays: intOption('expires-in-days', o['expires-in-days'], 1, 3650) }
      : {}),
  };
  let created: ApiOutputs['tokens']['create'];
  const signInName = o['sign-in'];
  if (signInName === undefined) {
    created = await ctx.client().mutate('tokens.create', input);
  } else {
    const password = await readPassword(ctx.io, o['password-stdin'] === true, `password for ${signInName}: `);
    const anonymous = new ControlClient(ctx.settings.url, null, ctx.settings.timeoutMs);
    const signedIn = await anonymous.callRaw('auth.signIn', { name: signInName, password });
    const cookie = signedIn.headers.get('set-cookie')?.split(';')[0];
    if (!cookie) throw new CliError(exitCodes.error, 'the control plane signed in but set no session cookie');
    const session = new ControlClient(ctx.settings.url, { cookie }, ctx.settings.timeoutMs);
    try {
      created = await session.mutate('tokens.create', input);
    } finally {
      await session.mutate('auth.signOut', {}).catch(() => undefined);
    }
  }
  return {
    exitCode: exitCodes.done,
    json: created,
    human: [
      `token "${created.name}" for ${created.operator} (id ${created.id}), expires ${created.expiresAt ?? 'never'}:`,
      '',
      `  ${created.token}`,
      '',
      'It is shown this once and never stored: keep it in your secret store, then',
      `  export SAGAFLOW_TOKEN=${created.token}`,
      `Revoke it with: sagaflow token revoke ${created.id}`,
    ],
  };
}

async function listTokens(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('token list', args.options, ['operator', 'all', 'revoked']);
  noMorePositionals('token list', args.positionals.slice(2));
  const o = args.options;
  if (o.all && o.operator !== undefined) throw usageError('token list takes --operator or --all, not both');
  const tokens = await ctx.client().query<TokenView[]>('tokens.list', {
    ...(o.operator !== undefined ? { operator: o.operator } : {}),
    ...(o.all ? { all: true } : {}),
    ...(o.revoked ? { includeRevoked: true } : {}),
  });
  const now = Date.now();
  return {
    exitCode: exitCodes.done,
    json: tokens,
    human:
      tokens.length === 0
        ? ['no tokens']
        : formatTable(
            ['ID', 'NAME', 'OPERATOR', 'STARTS', 'STATE', 'CREATED', 'LAST USED', 'EXPIRES'],
            tokens.map((t) => [
              t.id,
              t.name,
              t.operator,
              `${t.hint}…`,
              t.state,
              age(t.createdAt, now),
              age(t.lastUsedAt, now),
              t.expiresAt ?? 'never',
            ]),
          ),
  };
}

async function revokeToken(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('token revoke', args.options, []);
  const [, , id, ...rest] = args.positionals;
  noMorePositionals('token revoke', rest);
  if (id === undefined) throw usageError('token revoke needs the token id; `sagaflow token list` shows them');
  const tokenId = idArgument('token revoke', 'token', id);
  const revoked = await ctx.client().mutate<ApiOutputs['tokens']['revoke']>('tokens.revoke', { id: tokenId });
  return {
    exitCode: exitCodes.done,
    json: revoked,
    human: [
      revoked.alreadyRevoked
        ? `token "${revoked.name}" of ${revoked.operator} was already revoked at ${revoked.revokedAt}`
        : `token "${revoked.name}" of ${revoked.operator} revoked: its next request is refused`,
    ],
  };
}

export function tokenCommand(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  const sub = args.positionals[1];
  if (sub === 'create') return createToken(ctx, args);
  if (sub === 'list') return listTokens(ctx, args);
  if (sub === 'revoke') return revokeToken(ctx, args);
  throw usageError(`token needs create, list or revoke${sub === undefined ? '' : `, got "${sub}"`}`);
}
