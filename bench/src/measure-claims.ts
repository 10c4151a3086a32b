/**
 * How runs reach Sagaflow's worker pool in a steady closed loop, with NOTIFY on and off (ADR 0038,
 * addendum of 2026-12-01): the pool's counters per flow, read at two instants while every client is
 * busy, so neither the start nor the end of a loop (where the last runs finish with no start behind
 * them and each freed slot may claim) is in the figures. A throwaway PostgreSQL 15 cluster with
 * durable commits; one engine, a pool of `c`, `c` clients each starting the 3-step bench flow and
 * waiting for its `run.finished`, the modes interleaved. A measurement of counts, not of speed.
 *
 *   pnpm --filter @sagaflow/bench run bench:claims [--concurrency 8] [--seconds 10] [--rounds 2]
 */
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { WorkerPoolCounters } from '@sagaflow/engine';
import { createDatabase } from '@sagaflow/test-postgres';
import { createBenchFlow } from './bench-flow.ts';
import { fixed, markdownTable } from './markdown-table.ts';
import { openBenchEngine } from './open-bench-engine.ts';
import { labelPoolCounters } from './pool-counters-per-flow.ts';
import { prepareTemplateDatabase } from './prepare-template-database.ts';
import { progress } from './progress.ts';
import { driveEngine } from './sagaflow-peer.ts';
import { startBenchCluster } from './start-bench-cluster.ts';
import { withDurableServer } from './with-durable-server.ts';

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
  },
});
const concurrency = Number(values.concurrency);
const measureMs = Number(values.seconds) * 1000;
const rounds = Number(values.rounds);
const warmupMs = 2_000;

interface Sample {
  readonly notify: boolean;
  readonly flows: number;
  /** Each counter's growth over the window, labelled. */
  readonly counts: [string, number][];
  readonly load: number;
}

/** `after − before`, counter by counter, in the bench's labelled order. */
function delta(before: WorkerPoolCounters, after: WorkerPoolCounters): [string, number][] {
  const from = labelPoolCounters(before);
  return labelPoolCounters(after).map(([label, n], i) => [label, n - (from[i]?.[1] ?? 0)]);
}

async function measure(url: string, notify: boolean): Promise<Sample> {
  const bench = createBenchFlow();
  const { db, engine } = await openBenchEngine(url, concurrency, bench, { notify });
  const peer = driveEngine(bench, db, engine);
  let finished = 0;
  let running = true;
  const client = async (id: number) => {
    for (let n = id; running; n += concurrency) {
      await peer.runOne(n);
      finished += 1;
    }
  };
  const clients = Array.from({ length: concurrency }, (_, i) => client(i));
  try {
    await sleep(warmupMs);
    const before = { flows: finished, counters: engine.workerCounters() };
    await sleep(measureMs);
    const after = { flows: finished, counters: engine.workerCounters() };
    if (!before.counters || !after.counters) throw new Error('the bench engine has no worker pool');
    const counts = delta(before.counters, after.counters);
    return { notify, flows: after.flows - before.flows, counts, load: loadavg()[0]! };
  } finally {
    running = false;
    await Promise.all(clients);
    await peer.close();
  }
}

progress('starting a throwaway PostgreSQL 15 cluster (@sagaflow/test-postgres)');
const { cluster } = await startBenchCluster();
try {
  const template = 'claims_template';
  await prepareTemplateDatabase(cluster.adminUrl, template);
  const samples = await withDurableServer(cluster, async () => {
    const out: Sample[] = [];
    for (let round = 1; round <= rounds; round++) {
      for (const notify of [true, false]) {
        const name = `claims_r${round}_${notify ? 'notify' : 'poll'}`;
        const url = await createDatabase(cluster.adminUrl, name, { template });
        const sample = await measure(url, notify);
        progress(`round ${round}, NOTIFY ${notify ? 'on' : 'off'}: ${sample.flows} flows measured`);
        out.push(sample);
      }
    }
    return out;
  });
  const columns = samples.map((s, i) => `r${Math.floor(i / 2) + 1} NOTIFY ${s.notify ? 'on' : 'off'}`);
  const rows = samples[0]!.counts.map(([label], i) => [
    label,
    ...samples.map((s) => fixed((s.counts[i]?.[1] ?? 0) / s.flows, 3)),
  ]);
  process.stdout.write(
    [
      `Sagaflow worker pool per flow, closed loop at c=${concurrency} (pool of ${concurrency}), durable commits, ` +
        `${warmupMs / 1000} s warm-up then ${measureMs / 1000} s read between two snapshots:`,
      '',
      markdownTable(
        ['per flow', ...columns],
        [...rows, ['flows in the window', ...samples.map((s) => String(s.flows))]],
      ),
      '',
      `Load average (1 min) at the end of each window: ${samples.map((s) => s.load.toFixed(1)).join(', ')} (2 cores).`,
      '',
    ].join('\n'),
  );
} finally {
  await cluster.stop();
}
