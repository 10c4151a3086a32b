import type { PruneProgress } from '@sagaflow/engine';
import { pino } from 'pino';
import { createControlEngine } from '../../control-engine.ts';
import { parseEnv } from '../../env.ts';
import type { CliIo, CommandOutcome } from '../cli-context.ts';
import { exitCodes } from '../exit-codes.ts';
import { openLocalDatabase } from './open-local-database.ts';
import { ageOption } from '../parse-age.ts';
import { allowOnly, intOption, noMorePositionals, type ParsedArgs } from '../parse-cli-args.ts';

/** One progress line per batch, on stderr: what is done, what is left, how fast. */
export function formatPruneProgress(p: PruneProgress): string {
  return `prune: ${p.phase} batch ${p.batches}: ${p.done} rows done, ${p.left} left, ${p.rowsPerSecond} rows/s`;
}

/**
 * `prune [--older-than AGE] [--batch-size N] [--dry-run]`: retention (ADR 0027) run locally, like the
 * sweeps: it opens the database itself. Progress goes to stderr after every batch; the report (or,
 * with --dry-run, the counts per table) is JSON on stdout. Killed half-way, it leaves every run whole
 * or gone; run it again to finish.
 */
export async function pruneCommand(
  source: Record<string, string | undefined>,
  args: ParsedArgs,
  io: CliIo,
): Promise<CommandOutcome> {
  allowOnly('prune', args.options, ['older-than', 'batch-size', 'dry-run']);
  noMorePositionals('prune', args.positionals.slice(1));
  const olderThanSeconds = ageOption('older-than', args.options['older-than']);
  const batchSize = intOption('batch-size', args.options['batch-size'], 1, 10_000);
  const options = {
    ...(olderThanSeconds === undefined ? {} : { olderThanSeconds }),
    ...(batchSize === undefined ? {} : { batchSize }),
  };
  const env = parseEnv(source);
  const logger = pino({ level: env.LOG_LEVEL === 'info' ? 'warn' : env.LOG_LEVEL }, pino.destination(2));
  const db = await openLocalDatabase(env, 'prune');
  try {
    const engine = createControlEngine(db, env, logger);
    const result = args.options['dry-run']
      ? { dryRun: true, ...(await engine.retention.preview(options)) }
      : await engine.retention.prune(options, (p) => io.err(formatPruneProgress(p)));
    return { exitCode: exitCodes.done, json: result, human: [JSON.stringify(result, null, 2)] };
  } finally {
    await db.close();
  }
}
