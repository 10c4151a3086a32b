import { userInfo } from 'node:os';
import { CliError } from '../cli-error.ts';
import type { CliContext, CliIo, CommandOutcome } from '../cli-context.ts';
import type { ApiOutputs } from '../control-client.ts';
import { exitCodes } from '../exit-codes.ts';
import { allowOnly, noMorePositionals, usageError, type ParsedArgs } from '../parse-cli-args.ts';

/** The shortest password the control plane takes (operators.create, auth.changePassword). */
const minLength = 12;

/**
 * Passwords for these commands: from stdin, one per line in the order given (scripts); else asked
 * for on the terminal without echo, a new one twice. Never an argument or an environment variable.
 */
async function readPasswords(io: CliIo, fromStdin: boolean, prompts: { current?: string; next: string }) {
  if (fromStdin) {
    const lines = (await io.readStdin()).split(/\r?\n/);
    const wanted = prompts.current === undefined ? 1 : 2;
    if (lines.slice(0, wanted).some((l) => l === ''))
      throw usageError(
        wanted === 1
          ? '--password-stdin: the first line of stdin is the new password, and it is empty'
          : '--password-stdin: stdin holds the current password on its first line and the new one on its second',
      );
    return { current: wanted === 2 ? lines[0] : undefined, next: lines[wanted - 1] ?? '' };
  }
  const ask = async (prompt: string) => {
    const answer = await io.promptSecret(prompt);
    if (answer === null)
      throw new CliError(
        exitCodes.usage,
        'a password is needed and stdin is not a terminal: pipe it in with --password-stdin',
      );
    if (answer === '') throw usageError('the password is empty');
    return answer;
  };
  const current = prompts.current === undefined ? undefined : await ask(prompts.current);
  const next = await ask(prompts.next);
  if ((await ask('the same new password again: ')) !== next)
    throw usageError('the two new passwords differ; nothing was changed');
  return { current, next };
}

/** Refused here before anything is sent, in the words the control plane would use. */
function checkLength(password: string): void {
  if (password.length < minLength)
    throw usageError(`the new password is too short: at least ${minLength} characters; nothing was changed`);
}

/**
 * `passwd`: the token's operator changes its own password (auth.changePassword, ADR 0111): the current
 * one is checked under the sign-in limit; the operator's sessions end, its API tokens stay.
 */
export async function passwdCommand(ctx: CliContext, args: ParsedArgs): Promise<CommandOutcome> {
  allowOnly('passwd', args.options, ['password-stdin']);
  noMorePositionals('passwd', args.positionals.slice(1));
  const client = ctx.client();
  const { current, next } = await readPasswords(ctx.io, args.options['password-stdin'] === true, {
    current: 'current password: ',
    next: `new password (${minLength} characters or more): `,
  });
  checkLength(next);
  const changed = await client.mutate<ApiOutputs['auth']['changePassword']>('auth.changePassword', {
    currentPassword: current,
    newPassword: next,
  });
  return {
    exitCode: exitCodes.done,
    json: changed,
    human: [
      `password changed; ${changed.otherSessionsEnded} console session${changed.otherSessionsEnded === 1 ? '' : 's'} ended`,
      'your API tokens still work; `sagaflow token list` shows them, `token revoke <id>` ends one',
    ],
  };
}

/**
 * `reset-password <name>`: an admin sets another operator's password (operators.resetPassword, ADR
 * 0114); every session of theirs ends. With `--local` it opens the database itself instead (the
 * break-glass for when no admin can sign in): no token, the trail row's actor is `local:<os user>`.
 */
export async function resetPasswordCommand(
  ctx: CliContext | null,
  source: Record<string, string | undefined>,
  io: CliIo,
  args: ParsedArgs,
): Promise<CommandOutcome> {
  allowOnly('reset-password', args.options, ['password-stdin', 'local']);
  const [, rawName, ...rest] = args.positionals;
  noMorePositionals('reset-password', rest);
  const name = rawName?.trim().toLowerCase();
  if (!name) throw usageError("reset-password needs the operator's sign-in name");
  const local = args.options.local === true;
  const client = local ? null : (ctx?.client() ?? null);
  const { next } = await readPasswords(io, args.options['password-stdin'] === true, {
    next: `new password for ${name} (${minLength} characters or more): `,
  });
  checkLength(next);
  const done = local
    ? await resetLocally(source, name, next)
    : await client!.mutate<ApiOutputs['operators']['resetPassword']>('operators.resetPassword', {
        name,
        newPassword: next,
      });
  return {
    exitCode: exitCodes.done,
    json: { ...done, local },
    human: [
      `password of ${done.name} reset${local ? ' (locally, on the database itself)' : ''}; ${done.sessionsEnded} session${done.sessionsEnded === 1 ? '' : 's'} ended`,
      ...(done.disabled ? [`${done.name} is disabled: enable it again before it can sign in`] : []),
      'tell them the new password out of band; they change it from the console (Account) or with `sagaflow passwd`',
    ],
  };
}

async function resetLocally(source: Record<string, string | undefined>, name: string, password: string) {
  // Loaded only here: the engine and its drivers take a while to import (ADR 0082).
  const [{ parseEnv }, { openLocalDatabase }, { resetPasswordLocally }] = await Promise.all([
    import('../../env.ts'),
    import('./open-local-database.ts'),
    import('../../auth/reset-password-locally.ts'),
  ]);
  const db = await openLocalDatabase(parseEnv(source), 'reset-password --local');
  try {
    const reset = await resetPasswordLocally(db.prisma, name, password, `local:${osUser()}`);
    if (!reset) throw new CliError(exitCodes.error, `no operator named ${name}; nothing was changed`);
    return reset;
  } finally {
    await db.close();
  }
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
