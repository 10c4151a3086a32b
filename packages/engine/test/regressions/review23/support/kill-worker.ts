// The child worker process of sigkill-while-a-siblings-start-is-out.pg.test.ts: an engine with its pool
// on the database URL in argv[2], whose check of child B's input never returns (B's start stays out).
// It prints `ready <worker id>`, then `b-check <n>` each time a replay reaches that check, and waits to
// be killed.
import { pino } from 'pino';
import { createDatabase, createEngine } from '../../../../src/index.ts';
import { killFlows } from './kill-flows.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: kill-worker.ts <database url>');
// Mode `hang` (default): B's check never returns. Mode `stdin`: A's and B's checks each print
// `a-check` / `b-check <n>` and return once a line arrives on stdin (the test holds the parent's row first).
const mode = process.argv[3] ?? 'hang';
let lines = 0;
const waiters: (() => void)[] = [];
process.stdin.on('data', (chunk: Buffer) => {
  lines += chunk.toString().split('\n').length - 1;
  while (lines > 0 && waiters.length > 0) {
    lines -= 1;
    waiters.shift()?.();
  }
});
const lineFromTest = () => new Promise<void>((resolve) => waiters.push(resolve));
let checks = 0;
const { flows, actions } = killFlows(
  () => {
    checks += 1;
    process.stdout.write(`b-check ${checks}\n`);
    return mode === 'stdin' ? lineFromTest() : new Promise<never>(() => undefined);
  },
  () => undefined,
  () => {
    if (mode !== 'stdin') return Promise.resolve();
    process.stdout.write('a-check\n');
    return lineFromTest();
  },
);
const db = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
const engine = createEngine({ db, flows, actions, logger: pino({ level: 'silent' }) });
engine.startWorkers();
process.stdout.write(`ready ${engine.runtime.workerId}\n`);
