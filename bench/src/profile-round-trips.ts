import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createDatabase as openEngineDatabase, type Engine } from '@sagaflow/engine';
import { createDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { analyzeLikeAutovacuum } from './analyze-like-autovacuum.ts';
import { createBenchEngine } from './open-bench-engine.ts';
import { parseStepEventsArm, prepareTemplateDatabase } from './prepare-template-database.ts';
import { percentile } from './percentile.ts';
import { progress } from './progress.ts';
import { coresBusy, readCpuTimes } from './read-cpu-times.ts';
import {
  readServerRoundTripStats,
  resetServerRoundTripStats,
  trackServerRoundTrips,
} from './read-server-round-trip-stats.ts';
import { renderRoundTrips, type RoundTripReport } from './render-round-trips.ts';
import { runClosedLoop } from './run-closed-loop.ts';
import { sampleWaitEvents } from './sample-wait-events.ts';
import { driveEngine } from './sagaflow-peer.ts';
import { startBenchCluster } from './start-bench-cluster.ts';
import { summariseRoundTrips, type RunTrace } from './summarise-round-trips.ts';
import { traceRoundTrips } from './trace-round-trips.ts';
import { createTracedBenchFlow } from './traced-bench-flow.ts';
import { withDurableServer } from './with-durable-server.ts';

/**
 * `pnpm --filter @sagaflow/bench run bench:round-trips [concurrency] [seconds] [--json file] [--set name=value] [--without-run-fks] [--step-events written|dropped|passed] [--per-kind]`: where a
 * flow's wall time goes on the bench's headline setting (issue 11): the closed loop of the 3-step
 * no-op flow at `concurrency` (8) on a throwaway PostgreSQL 15 restarted with durable commits, warmed
 * up, analyzed as autovacuum would have (ADR 0051), warmed up again, then measured for `seconds` (10).
 * Every statement is timed from outside the engine, through the handle the bench gives it
 * ({@link traceRoundTrips}), and each action call from inside the flow: per flow and per statement
 * kind, the time queued behind the in-flight statement of its kind, the engine's code before the send,
 * the wait for a pooled connection, the wire and server (split with pg_stat_statements and pg_stat_wal
 * into execution, planning, WAL flush and the rest, and the backends' wait events sampled every
 * {@link waitSampleEveryMs} ms), the engine turning the answer into the next
 * action call, and the runs each statement carried; beside them, CPU of Node and PostgreSQL and how
 * busy Node's event loop was. `--set name=value` (repeatable) sets a server setting for the run, to
 * try one (`--set commit_delay=500`) against the same figures. `--without-run-fks` measures a schema without
 * the foreign keys to flow_runs (ADR 0068), as an A/B arm; `--step-events` an arm that drops every step's
 * events on insert or keeps them through the same trigger (ADR 0072). `--per-kind` opens the engine's handle
 * with `statementRounds: false`: each kind's statements apart, as before ADR 0066's rounds.
 */
async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    args: process.argv.slice(2).filter((a) => a !== '--'),
    options: {
      json: { type: 'string' },
      set: { type: 'string', multiple: true, default: [] },
      'without-run-fks': { type: 'boolean', default: false },
      'step-events': { type: 'string' },
      'per-kind': { type: 'boolean', default: false },
    },
  });
  const concurrency = Number(positionals[0] ?? 8);
  const seconds = Number(positionals[1] ?? 10);
  const { cluster, statements } = await startBenchCluster();
  try {
    // The server's side of each round trip is read from it: without it, the split would be a guess.
    if (!statements.enabled)
      throw new Error(`pg_stat_statements is needed and could not be loaded: ${statements.reason}`);
    await trackServerRoundTrips(cluster.adminUrl, values.set);
    await prepareTemplateDatabase(cluster.adminUrl, 'round_trips_template', {
      withoutRunForeignKeys: values['without-run-fks'],
      stepEvents: parseStepEventsArm(values['step-events']),
    });
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('round_trips'), {
      template: 'round_trips_template',
    });
    const report = await withDurableServer(cluster, () =>
      measure(url, cluster.adminUrl, cluster.dataDir, concurrency, seconds, !values['per-kind']),
    );
    console.log(renderRoundTrips(report));
    if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await cluster.stop();
  }
}

/** How often the server's backends are sampled for what they wait on (one short query each time). */
const waitSampleEveryMs = 2;

async function measure(
  url: string,
  adminUrl: string,
  dataDir: string,
  concurrency: number,
  seconds: number,
  statementRounds: boolean,
): Promise<RoundTripReport> {
  const name = new URL(url).pathname.slice(1);
  const actions = new Map<number, { inAt: number; outAt: number }[]>();
  const bench = createTracedBenchFlow((n, step, inAt, outAt) => {
    const calls = actions.get(n) ?? [];
    calls[step - 1] = { inAt, outAt };
    actions.set(n, calls);
  });
  // The bench's pool size for `concurrency` workers (open-bench-engine.ts), on a handle traced before the engine sees it.
  const tracer = traceRoundTrips(
    await openEngineDatabase({ kind: 'postgres', url, poolSize: concurrency + 4, statementRounds }),
  );
  const engine = createBenchEngine(tracer.db, concurrency, bench);
  const starts = new Map<number, number>();
  const runOf = new Map<string, number>();
  const finished = new Map<string, number>();
  const unsubscribe = engine.events.on('run.finished', ({ runId }) => void finished.set(runId, performance.now()));
  const traced: Engine = {
    ...engine,
    async startFlow(flow, input, options) {
      const n = (input as { n: number }).n;
      starts.set(n, performance.now());
      const started = await engine.startFlow(flow, input, options);
      runOf.set(started.runId, n);
      return started;
    },
  };
  const peer = driveEngine(bench, tracer.db, traced);
  try {
    progress(`warm-up: c=${concurrency}, 3 s (durable commits)`);
    await runClosedLoop(concurrency, 3_000, (n) => peer.runOne(n));
    progress('analyze, then warm-up again on the new plans: 2 s');
    await analyzeLikeAutovacuum(url);
    await runClosedLoop(concurrency, 2_000, (n) => peer.runOne(100_000_000 + n));
    for (const seen of [actions, starts, runOf, finished]) seen.clear();
    tracer.reset();
    await resetServerRoundTripStats(adminUrl);
    const delay = monitorEventLoopDelay({ resolution: 1 });
    const cpuBefore = await readCpuTimes(dataDir);
    const loopBefore = performance.eventLoopUtilization();
    const sampler = await sampleWaitEvents(adminUrl, name, waitSampleEveryMs);
    delay.enable();
    progress(`measuring: c=${concurrency}, ${seconds} s`);
    const loop = await runClosedLoop(concurrency, seconds * 1_000, (n) => peer.runOne(n));
    delay.disable();
    const waits = await sampler.stop();
    const eventLoop = performance.eventLoopUtilization(loopBefore);
    const cpuAfter = await readCpuTimes(dataDir);
    const server = await readServerRoundTripStats(adminUrl, name);
    const runs: RunTrace[] = [...runOf].flatMap(([runId, n]) => {
      const finishedAt = finished.get(runId);
      const startCalledAt = starts.get(n);
      if (finishedAt === undefined || startCalledAt === undefined) return [];
      return [{ runId, startCalledAt, actions: actions.get(n) ?? [], finishedAt }];
    });
    return {
      concurrency,
      seconds,
      flowsPerSecond: (loop.flows * 1_000) / loop.windowMs,
      latencyP50Ms: percentile(loop.latenciesMs, 50),
      latencyP99Ms: percentile(loop.latenciesMs, 99),
      cores: coresBusy(cpuBefore, cpuAfter, loop.windowMs),
      eventLoop: {
        utilisation: eventLoop.utilization,
        delayP50Ms: delay.percentile(50) / 1e6,
        delayP99Ms: delay.percentile(99) / 1e6,
      },
      transactionsPerFlow: tracer.transactions / Math.max(1, loop.flows),
      summary: summariseRoundTrips(runs, tracer.statements),
      server,
      waits,
    };
  } finally {
    unsubscribe();
    await peer.close();
  }
}

await main();
