import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '@sagaflow/engine';
import { createBenchFlow } from './bench-flow.ts';
import { asObserver } from './observer-role.ts';
import { createBenchEngine } from './open-bench-engine.ts';
import { RunObserver } from './run-observer.ts';
import type { StarterLoad, StarterSpec } from './fork-replica-starter.ts';

/**
 * The scale-out section's starter in a process of its own, forked by fork-replica-starter.ts with a
 * {@link StarterSpec} as its JSON argument: an engine that never starts workers keeps `backlog` runs
 * started and unfinished with `starters` concurrent startFlow loops, while the observer counts the
 * finished ones every 20 ms and each count goes to the parent as a {@link StarterLoad}. It stops
 * when the parent says `stop` (or goes away), and fails (exit 1) as soon as a run ends other than
 * Completed. Run here rather than in the bench's process, whose promises carry what DBOS left there
 * (ADR 0049, 0055), so the starter's cost is its own.
 */
const spec = JSON.parse(process.argv[2] ?? 'null') as StarterSpec | null;
const send = process.send?.bind(process);
if (spec === null || !send) {
  process.stderr.write('replica-starter: usage: forked with a JSON starter spec\n');
  process.exit(2);
}
let done = false;
process.once('message', () => void (done = true));
process.once('disconnect', () => void (done = true));

const observer = await RunObserver.open(asObserver(spec.url));
const bench = createBenchFlow();
const db = await createDatabase({ kind: 'postgres', url: spec.url, poolSize: spec.starters + 1 });
// Starts runs only: its workers never start, so every step runs in the worker processes.
const engine = createBenchEngine(db, 1, bench);
const load = { started: 0, finished: 0 };
const starter = async () => {
  while (!done) {
    if (load.started - load.finished >= spec.backlog) {
      await sleep(2);
      continue;
    }
    load.started += 1;
    await engine.startFlow(bench.flow, { n: load.started });
  }
};
const poller = async () => {
  while (!done) {
    const { finished, notCompleted } = await observer.countFinished();
    if (notCompleted > 0) throw new Error(`scale-out: ${notCompleted} run(s) did not complete`);
    load.finished = finished;
    if (process.connected) send({ started: load.started, finished } satisfies StarterLoad);
    await sleep(20);
  }
};
try {
  await Promise.all([poller(), ...Array.from({ length: spec.starters }, starter)]);
} finally {
  done = true;
  await db.close();
  await observer.close();
}
if (process.connected) process.disconnect();
