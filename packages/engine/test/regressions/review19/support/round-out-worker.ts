// The child worker process of complete-step-with-the-round-owner-killed.pg.test.ts: an engine with its
// pool on the database URL in argv[2], whose parallel branches never return. It prints its worker id,
// then waits to be killed.
import { pino } from 'pino';
import { createDatabase, createEngine } from '../../../../src/index.ts';
import { roundOutConfig, roundOutFlow } from './round-out-flow.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: round-out-worker.ts <database url>');
const { flow, actions } = roundOutFlow(() => new Promise<never>(() => undefined));
const db = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
const engine = createEngine({ db, flows: [flow], actions, config: roundOutConfig, logger: pino({ level: 'silent' }) });
engine.startWorkers();
process.stdout.write(`ready ${engine.runtime.workerId}\n`);
