import { pino } from 'pino';
import { createControlEngine } from '../../control-engine.ts';
import { parseEnv } from '../../env.ts';
import type { CommandOutcome } from '../cli-context.ts';
import { exitCodes } from '../exit-codes.ts';
import { openLocalDatabase } from './open-local-database.ts';
import { allowOnly, noMorePositionals, type ParsedArgs } from '../parse-cli-args.ts';

/**
 * `monitor sweep [--doctor]` and `doctor sweep`: maintenance passes that open the database
 * themselves (DATABASE_URL, or the embedded directory, refused with its holder's pid while a control
 * plane has it), under the replicas' monitor lease. Output is JSON either way.
 */
export async function localSweep(
  source: Record<string, string | undefined>,
  args: ParsedArgs,
  doctorOnly: boolean,
): Promise<CommandOutcome> {
  const name = doctorOnly ? 'doctor sweep' : 'monitor sweep';
  allowOnly(name, args.options, doctorOnly ? [] : ['doctor']);
  noMorePositionals(name, args.positionals.slice(2));
  const env = parseEnv(source);
  const logger = pino({ level: env.LOG_LEVEL === 'info' ? 'warn' : env.LOG_LEVEL }, pino.destination(2));
  const db = await openLocalDatabase(env, name);
  try {
    const engine = createControlEngine(db, env, logger);
    const result = doctorOnly
      ? await engine.monitorPass({ doctor: true, expiration: false })
      : await engine.monitorPass({ doctor: args.options.doctor === true });
    const text = JSON.stringify(result, null, 2);
    return { exitCode: result.swept ? exitCodes.done : exitCodes.refused, json: result, human: [text] };
  } finally {
    await db.close();
  }
}
