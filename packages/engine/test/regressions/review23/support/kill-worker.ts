// The child worker process of sigkill-while-a-siblings-start-is-out.pg.test.ts: an engine with its pool
// on the database URL in argv[2], whose check of child B's input never returns (B's start stays out).
// It prints `ready <worker id>`, then `b-check <n>` each time a replay reaches that check, and waits to
// be killed.
import { linesFromTest, startChildPool } from '../../../support/child-worker-main.ts';
import { killFlows } from './kill-flows.ts';

// Mode `hang` (default): B's check never returns. Mode `stdin`: A's and B's checks each print
// `a-check` / `b-check <n>` and return once a line arrives on stdin (the test holds the parent's row first).
const mode = process.argv[3] ?? 'hang';
const lineFromTest = linesFromTest();
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
await startChildPool({ flows, actions });
