import type { ExitCode } from './exit-codes.ts';

/** A failure the CLI reports as one message (saying what to do next) and an exit status. */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    /** What the control plane answered, for --json output. */
    readonly body: unknown = null,
  ) {
    super(message);
  }
}
