import type { Engine } from '@sagaflow/engine';
import { pino } from 'pino';
import { createControlEngine, openDatabase } from '../control-engine.ts';
import type { ControlEnv } from '../env.ts';

export const usage = `usage: sagaflow <command>

  monitor sweep [--doctor]   one pass of the expiration monitor: overdue steps, then overdue runs
                             (--doctor: the doctor's R1-R3 too); skipped while a running control
                             plane holds the monitor lease
  doctor sweep               one pass of the doctor (R1-R3), under the same lease
  kick <run-id>              a fresh job for the step the run is parked on; refills its repair budget

Connects to DATABASE_URL, or to the embedded database in SAGAFLOW_DATA_DIR, which one process holds
at a time: while a control plane has it open, this is refused with that process's pid.
Prints one JSON object; exit 0 done, 2 refused (kick skipped), 1 error, 64 usage.`;

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

type Command =
  | { kind: 'monitor'; doctor: boolean }
  | { kind: 'doctor' }
  | { kind: 'kick'; runId: string }
  | { kind: 'usage'; problem: string | null };

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function parseCommand(argv: readonly string[]): Command {
  const [cmd, sub, ...rest] = argv;
  if (cmd === undefined || cmd === 'help' || cmd === '--help') return { kind: 'usage', problem: null };
  if (cmd === 'monitor' && sub === 'sweep') {
    const unknown = rest.filter((a) => a !== '--doctor');
    if (unknown.length > 0) return { kind: 'usage', problem: `unknown option ${unknown.join(' ')}` };
    return { kind: 'monitor', doctor: rest.includes('--doctor') };
  }
  if (cmd === 'doctor' && sub === 'sweep' && rest.length === 0) return { kind: 'doctor' };
  if (cmd === 'kick') {
    if (sub === undefined) return { kind: 'usage', problem: 'kick needs a run-id' };
    if (!uuid.test(sub)) return { kind: 'usage', problem: `run-id must be a run's UUID, got "${sub}"` };
    if (rest.length > 0) return { kind: 'usage', problem: `unexpected ${rest.join(' ')}` };
    return { kind: 'kick', runId: sub };
  }
  return { kind: 'usage', problem: `unknown command "${argv.join(' ')}"` };
}

async function execute(engine: Engine, command: Exclude<Command, { kind: 'usage' }>) {
  switch (command.kind) {
    case 'monitor':
      return engine.monitorPass({ doctor: command.doctor });
    case 'doctor':
      return engine.monitorPass({ doctor: true, expiration: false });
    case 'kick':
      return engine.kick(command.runId);
  }
}

/** The operator's command line over the control plane's engine (its flows, its database). */
export async function runCli(argv: readonly string[], env: ControlEnv, io: CliIo): Promise<number> {
  const command = parseCommand(argv);
  if (command.kind === 'usage') {
    if (command.problem) io.err(`sagaflow: ${command.problem}`);
    io.err(usage);
    return command.problem ? 64 : 0;
  }
  const logger = pino({ level: env.LOG_LEVEL === 'info' ? 'warn' : env.LOG_LEVEL }, pino.destination(2));
  // The embedded database is locked by whoever holds it: refused here with the holder's pid.
  const db = await openDatabase(env);
  try {
    const engine = createControlEngine(db, env, logger);
    const result = await execute(engine, command);
    io.out(JSON.stringify(result, null, 2));
    if ('kicked' in result && !result.kicked) return 2;
    if ('swept' in result && !result.swept) return 2;
    return 0;
  } catch (err) {
    const e = err as { code?: string; message?: string };
    io.err(`sagaflow: ${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}`);
    return 1;
  } finally {
    await db.close();
  }
}
