// The child worker process of sigkill-right-after-the-parents-end.pg.test.ts: an engine with its pool on the
// database URL in argv[2]. It prints `ready <worker id>`; `ran <name>` each time an action starts; `side`
// fails once a line arrives on stdin; A's action never returns. It waits to be killed.
import { pino } from 'pino';
import { createDatabase, createEngine } from '../../../../src/index.ts';
import { endKillFlows } from './end-kill-flows.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: end-kill-worker.ts <database url>');
let lines = 0;
const waiters: (() => void)[] = [];
process.stdin.on('data', (chunk: Buffer) => {
  lines += chunk.toString().split('\n').length - 1;
  while (lines > 0 && waiters.length > 0) {
    lines -= 1;
    waiters.shift()?.();
  }
});
const { flows, actions } = endKillFlows(
  (name) => process.stdout.write(`ran ${name}\n`),
  () => new Promise<void>((resolve) => waiters.push(resolve)),
  () => new Promise<void>(() => undefined),
);
const db = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
const engine = createEngine({ db, flows, actions, logger: pino({ level: 'silent' }) });
engine.startWorkers();
process.stdout.write(`ready ${engine.runtime.workerId}\n`);
