import type { CliSettings } from './cli-settings.ts';
import { ControlClient } from './control-client.ts';
import { CliError } from './cli-error.ts';
import { exitCodes, type ExitCode } from './exit-codes.ts';
import { createTokenHint } from '../auth/tokens/resolve-bearer-token.ts';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** All of stdin (a password given with --password-stdin). */
  readStdin(): Promise<string>;
  /** Asks for a secret on the terminal without echoing it; null when stdin is not a terminal. */
  promptSecret(prompt: string): Promise<string | null>;
}

/** What a command produced: its exit status, its JSON document, and the lines a person reads. */
export interface CommandOutcome {
  exitCode: ExitCode;
  json: unknown;
  human: string[];
}

export interface CliContext {
  settings: CliSettings;
  io: CliIo;
  /** A client with the API token; refuses (exit 3) with how to make one when SAGAFLOW_TOKEN is unset. */
  client(): ControlClient;
}

export function createCliContext(settings: CliSettings, io: CliIo): CliContext {
  return {
    settings,
    io,
    client() {
      if (settings.token === null)
        throw new CliError(exitCodes.unauthorised, `no API token: SAGAFLOW_TOKEN is not set; ${createTokenHint}`);
      return new ControlClient(settings.url, { token: settings.token }, settings.timeoutMs);
    },
  };
}
