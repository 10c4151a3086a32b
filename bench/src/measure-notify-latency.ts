/**
 * Start-to-first-step latency of a run started by one process and run by another (ADR 0038), with
 * the worker woken by NOTIFY and with the poll alone. A throwaway PostgreSQL 15 cluster
 * (test-postgres's settings: fsync off); a forked worker process (notify-latency-worker.ts, a pool
 * of 4); this process starts one run at a time through an engine that runs no workers, after a
 * random pause in [0, poll) so starts fall at every phase of the worker's poll, and measures from
 * just before `startFlow` to the first step's first line in the worker (wall clocks of one machine).
 * A measurement, not a test.
 *
 *   pnpm --filter @sagaflow/bench exec tsx src/measure-notify-latency.ts [--runs 40] [--poll 500]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createDatabase, createEngine, defineAction, defineFlow, migrate } from '@sagaflow/engine';
import { createDatabase as createPgDatabase, startCluster } from '@sagaflow/test-postgres';
import { pino } from 'pino';
import { latencyFlowName, type FirstStep } from './notify-latency-flow.ts';
import { percentile } from './percentile.ts';
import { progress } from './progress.ts';
import { benchExecArgv } from './bench-exec-argv.mjs';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '40' }, poll: { type: 'string', default: '500' } },
});
const runs = Number(values.runs);
const pollMs = Number(values.poll);
const workerPath = fileURLToPath(new URL('./notify-latency-worker.ts', import.meta.url));

// The starter only writes runs: a flow of the same name, whose step never runs here.
const step = defineAction({ name: 'latency.first', run: async (_input: { key: string }) => 1 });
const flow = defineFlow({
  name: latencyFlowName,
  version: 1,
  run: async (ctx, input: { key: string }) => ctx.action(step, input),
});

async function forkWorker(url: string, notify: boolean, onStep: (s: FirstStep) => void): Promise<ChildProcess> {
  const child = fork(workerPath, [url, notify ? 'on' : 'off', String(pollMs)], {
    cwd: dirname(dirname(workerPath)),
    execArgv: benchExecArgv,
    stdio: ['ignore', 2, 2, 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`latency worker exited with ${code}`)));
    child.on('message', (m) => {
      if (m === 'ready') resolve();
      else onStep(m as FirstStep);
    });
  });
  return child;
}

interface Sample {
  /** From just before startFlow to the first step's first line in the worker. */
  readonly toStep: number;
  /** From just before startFlow to its return in this process: the start's own commit. */
  readonly toCommit: number;
}

async function measure(url: string, notify: boolean): Promise<Sample[]> {
  const waiting = new Map<string, (at: number) => void>();
  const child = await forkWorker(url, notify, (s) => waiting.get(s.key)?.(s.at));
  const db = await createDatabase({ kind: 'postgres', url, poolSize: 2 });
  const starter = createEngine({ db, flows: [flow], actions: [step], logger: pino({ level: 'silent' }) });
  const samples: Sample[] = [];
  try {
    // The worker's LISTEN takes hold a moment after it says ready: one unmeasured run first.
    for (let i = -1; i < runs; i++) {
      await sleep(Math.random() * pollMs);
      const key = `${notify ? 'on' : 'off'}-${i}`;
      const stepped = new Promise<number>((resolve) => waiting.set(key, resolve));
      const t0 = performance.timeOrigin + performance.now();
      await starter.startFlow(flow, { key });
      const committed = performance.timeOrigin + performance.now();
      const at = await stepped;
      if (i >= 0) samples.push({ toStep: at - t0, toCommit: committed - t0 });
    }
  } finally {
    child.send('stop');
    await new Promise((r) => child.once('exit', r));
    await db.close();
  }
  return samples;
}

const cluster = await startCluster({ log: (line) => progress(`test-postgres: ${line}`) });
try {
  const template = await createPgDatabase(cluster.adminUrl, 'bench_notify');
  const db = await createDatabase({ kind: 'postgres', url: template, poolSize: 2 });
  await migrate(db);
  await db.close();
  const rows: string[] = [];
  const loadBefore = loadavg()[0]!;
  // Interleaved, twice each, so a change in the machine's load falls on both.
  const results = { on: [] as Sample[], off: [] as Sample[] };
  for (const notify of [true, false, true, false]) {
    progress(`NOTIFY ${notify ? 'on' : 'off'}: ${runs} runs, poll ${pollMs} ms`);
    (notify ? results.on : results.off).push(...(await measure(template, notify)));
  }
  for (const [mode, samples] of Object.entries(results)) {
    const l = samples.map((s) => s.toStep);
    const mean = l.reduce((a, b) => a + b, 0) / l.length;
    const f = (v: number) => v.toFixed(1);
    const commit = percentile(
      samples.map((s) => s.toCommit),
      50,
    );
    rows.push(
      `| NOTIFY ${mode} | ${l.length} | ${f(percentile(l, 50))} | ${f(percentile(l, 90))} | ${f(percentile(l, 99))} | ${f(mean)} | ${f(commit)} |`,
    );
  }
  process.stdout.write(
    [
      `Start-to-first-step latency, run started in another process, worker poll ${pollMs} ms (ms):`,
      '',
      '| worker | runs | p50 | p90 | p99 | mean | p50 of the start alone (startFlow returned) |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...rows,
      '',
      `Load average (1 min) on this 2-core machine: ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after.`,
      '',
    ].join('\n'),
  );
} finally {
  await cluster.stop();
}
