import { CliError } from '../cli-error.ts';
import type { CliIo } from '../cli-context.ts';
import { exitCodes } from '../exit-codes.ts';

/**
 * A password: the first line of stdin with --password-stdin (scripts), else asked for on the
 * terminal without echo. Never an argument or an environment variable (both leak into history and
 * process listings).
 */
export async function readPassword(io: CliIo, fromStdin: boolean, prompt: string): Promise<string> {
  const password = fromStdin ? (await io.readStdin()).split(/\r?\n/)[0] : await io.promptSecret(prompt);
  if (password === null || password === undefined)
    throw new CliError(
      exitCodes.usage,
      'a password is needed and stdin is not a terminal: pipe it in with --password-stdin',
    );
  if (password.length === 0) throw new CliError(exitCodes.usage, 'the password is empty');
  return password;
}
