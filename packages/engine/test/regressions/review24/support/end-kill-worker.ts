// The child worker process of sigkill-right-after-the-parents-end.pg.test.ts: an engine with its pool on the
// database URL in argv[2]. It prints `ready <worker id>`; `ran <name>` each time an action starts; `side`
// fails once a line arrives on stdin; A's action never returns. It waits to be killed.
import { linesFromTest, startChildPool } from '../../../support/child-worker-main.ts';
import { endKillFlows } from './end-kill-flows.ts';

const { flows, actions } = endKillFlows(
  (name) => process.stdout.write(`ran ${name}\n`),
  linesFromTest(),
  () => new Promise<void>(() => undefined),
);
await startChildPool({ flows, actions });
