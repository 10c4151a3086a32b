// The child worker of a-rollback-whose-worker-is-frozen-says-why-and-ends.pg.test.ts: its second
// compensation prints `undoing 2` and waits for a line from the test. The test SIGSTOPs and SIGCONTs it.
import { linesFromTest, startChildPool } from '../../../support/child-worker-main.ts';
import { frozenRollbackConfig, frozenRollbackFlow } from './frozen-rollback-flow.ts';

const nextLine = linesFromTest();
const { flow, actions } = frozenRollbackFlow(async (i) => {
  if (i === 2) {
    process.stdout.write('undoing 2\n');
    await nextLine();
  }
  return i;
});
await startChildPool({ flows: [flow], actions, config: frozenRollbackConfig });
