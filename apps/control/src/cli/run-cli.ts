import { CliError } from './cli-error.ts';
import { createCliContext, type CliIo, type CommandOutcome } from './cli-context.ts';
import { parseCliSettings } from './cli-settings.ts';
import { exitCodes } from './exit-codes.ts';
import { approveCommand, listApprovals, rejectCommand, showApproval } from './commands/approval-commands.ts';
import { passwdCommand, resetPasswordCommand } from './commands/password-commands.ts';
import { changeOperatorCommand, createOperatorCommand, listOperatorsCommand } from './commands/operator-commands.ts';
import { listCatalogue, listInstances, listRuns, showInstance, showRun, whoami } from './commands/read-commands.ts';
import { genericRepair, namedRepair, namedRepairs } from './commands/repair-commands.ts';
import { tokenCommand } from './commands/token-commands.ts';
import { parseCliArgs, usageError, type ParsedArgs } from './parse-cli-args.ts';
import { usage } from './usage.ts';

export type { CliIo } from './cli-context.ts';
export { usage } from './usage.ts';

async function dispatch(
  argv: readonly string[],
  args: ParsedArgs,
  source: Record<string, string | undefined>,
  io: CliIo,
): Promise<CommandOutcome> {
  const [cmd, sub] = args.positionals;
  // The maintenance sweeps and prune open the database themselves and need none of the HTTP settings. They
  // are loaded only when asked for: the engine and its database drivers take over a second to import, which
  // every command over HTTP would otherwise wait for (ADR 0082).
  if ((cmd === 'monitor' || cmd === 'doctor') && sub === 'sweep') {
    const { localSweep } = await import('./commands/local-commands.ts');
    return localSweep(source, args, cmd === 'doctor');
  }
  if (cmd === 'prune') {
    const { pruneCommand } = await import('./commands/prune-command.ts');
    return pruneCommand(source, args, io);
  }
  // The break-glass reset opens the database itself: no control plane, no token (ADR 0114).
  if (cmd === 'reset-password' && args.options.local) return resetPasswordCommand(null, source, io, args);
  const ctx = createCliContext(parseCliSettings(source), io);
  const pair = `${cmd ?? ''} ${sub ?? ''}`.trim();
  switch (pair) {
    case 'runs list':
      return listRuns(ctx, args, argv);
    case 'run show':
      return showRun(ctx, args);
    case 'instances list':
      return listInstances(ctx, args, argv);
    case 'instance show':
      return showInstance(ctx, args);
    case 'operators list':
      return listOperatorsCommand(ctx, args);
    case 'approvals list':
      return listApprovals(ctx, args, argv);
    case 'approval show':
      return showApproval(ctx, args);
  }
  if (cmd === 'approve') return approveCommand(ctx, args);
  if (cmd === 'reject') return rejectCommand(ctx, args);
  if (cmd === 'whoami') return whoami(ctx, args);
  if (cmd === 'repairs') return listCatalogue(ctx, args);
  if (cmd === 'repair') return genericRepair(ctx, args);
  if (cmd === 'token') return tokenCommand(ctx, args);
  if (cmd === 'create-operator') return createOperatorCommand(ctx, args);
  if (cmd === 'operator') return changeOperatorCommand(ctx, args);
  if (cmd === 'passwd') return passwdCommand(ctx, args);
  if (cmd === 'reset-password') return resetPasswordCommand(ctx, source, io, args);
  if (cmd !== undefined && cmd in namedRepairs) return namedRepair(ctx, cmd, args);
  throw usageError(`unknown command "${argv.filter((a) => !a.startsWith('-')).join(' ')}"`);
}

/**
 * The operator's command line (`npm run sagaflow -- <command>`, ADR 0021). Reads and repairs go to
 * the running control plane over HTTP with the operator API token in SAGAFLOW_TOKEN; the
 * maintenance sweeps and prune open the database themselves. Prints for people, or one JSON document with
 * --json; returns the exit status (exit-codes.ts).
 */
export async function runCli(
  argv: readonly string[],
  source: Record<string, string | undefined>,
  io: CliIo,
): Promise<number> {
  const json = argv.includes('--json');
  try {
    const args = parseCliArgs(argv);
    if (args.positionals.length === 0 || args.positionals[0] === 'help' || args.options.help) {
      // --json keeps its promise of one JSON document on stdout, help included.
      io.out(json ? JSON.stringify({ usage }, null, 2) : usage);
      return exitCodes.done;
    }
    const outcome = await dispatch(argv, args, source, io);
    if (json) io.out(JSON.stringify(outcome.json, null, 2));
    else for (const line of outcome.human) io.out(line);
    return outcome.exitCode;
  } catch (err) {
    const e =
      err instanceof CliError
        ? err
        : new CliError(
            exitCodes.error,
            (err as { code?: string }).code && err instanceof Error
              ? `${(err as { code?: string }).code}: ${err.message}`
              : err instanceof Error
                ? err.message
                : String(err),
          );
    if (json)
      io.out(JSON.stringify({ error: { message: e.message, exitCode: e.exitCode, ...(e.body as object) } }, null, 2));
    io.err(`sagaflow: ${e.message}`);
    if (e.exitCode === exitCodes.usage) io.err('see `npm run sagaflow -- help`');
    return e.exitCode;
  }
}
