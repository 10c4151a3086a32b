import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createDatabase, startCluster, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { createBenchFlow } from './bench-flow.ts';
import { countAsyncWork } from './count-async-work.ts';
import { dbosPeer } from './dbos-peer.ts';
import { openBenchEngine } from './open-bench-engine.ts';
import { prepareTemplateDatabase } from './prepare-template-database.ts';
import { progress } from './progress.ts';
import { runClosedLoop } from './run-closed-loop.ts';
import { splitCpuByThread } from './split-cpu-by-thread.ts';
import { withDurableServer } from './with-durable-server.ts';
import { driveEngine } from './sagaflow-peer.ts';

/**
 * `pnpm --filter @sagaflow/bench run bench:profile [concurrency] [seconds]`: the engine's hot path
 * under V8's sampling profiler, to say where Node's CPU per flow goes before changing it (issue 11).
 * The bench's closed loop of the 3-step no-op flow at `concurrency` (8) on a throwaway PostgreSQL 15
 * (test-postgres's settings: fsync off; the commit's wait is not what is measured here). The profile
 * covers only the measured window, after a warm-up; the report is each bucket's share of the samples
 * the process was on CPU (idle excluded), with process.cpuUsage() per flow beside it, because a
 * sample taken while the OS has the process descheduled lands on whatever function was running.
 * The raw `.cpuprofile` is written to the working directory for Chrome DevTools. `--cpu-only` as a
 * further argument measures the same window without the profiler, whose own sampling thread adds to
 * process.cpuUsage(): the figure to compare before/after a change, user and system time apart.
 * `--durable` runs it against the same server restarted with durable commits, as `npm run bench`'s
 * headline measures (each round trip then waits for a flush, and the process idles between them).
 * `--after-dbos` first runs DBOS's bench flow for 3 s in this process and shuts it down, as the
 * bench's phases did before each got a process of its own: what DBOS leaves behind (its
 * AsyncLocalStorage hooks on every promise) then shows in Sagaflow's figures (ADR 0049).
 * `--warmup=<seconds>` (3) sets the warm-up: `--cpu-only` splits the CPU between the main thread
 * and the others (V8 compiling the hot path and its GC helpers), which a longer warm-up lowers
 * (ADR 0058).
 */
async function main(): Promise<void> {
  const concurrency = Number(process.argv[2] ?? 8);
  const seconds = Number(process.argv[3] ?? 10);
  const flags = new Set(process.argv.slice(4));
  const cpuOnly = flags.has('--cpu-only');
  const warmupFlag = [...flags].find((f) => f.startsWith('--warmup='));
  const warmupMs = warmupFlag === undefined ? 3_000 : Number(warmupFlag.slice('--warmup='.length)) * 1_000;
  if (!Number.isFinite(warmupMs) || warmupMs < 0)
    throw new Error(`bench:profile: ${warmupFlag} is not a number of seconds`);
  const cluster = await startCluster({ log: (line) => progress(`test-postgres: ${line}`) });
  try {
    await prepareTemplateDatabase(cluster.adminUrl, 'profile_template');
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('profile'), {
      template: 'profile_template',
    });
    const run = async () => {
      if (flags.has('--after-dbos')) await runDbosFirst(cluster.adminUrl, concurrency);
      await measure(
        url,
        concurrency,
        seconds,
        cpuOnly,
        warmupMs,
        flags.has('--count-async'),
        flags.has('--allocations'),
      );
    };
    if (flags.has('--durable')) await withDurableServer(cluster, run);
    else await run();
  } finally {
    await cluster.stop();
  }
}

async function measure(
  url: string,
  concurrency: number,
  seconds: number,
  cpuOnly: boolean,
  warmupMs: number,
  countTurns = false,
  allocations = false,
): Promise<void> {
  const bench = createBenchFlow();
  const { db, engine } = await openBenchEngine(url, concurrency, bench);
  const peer = driveEngine(bench, db, engine);
  try {
    progress(`warm-up: c=${concurrency}, ${warmupMs / 1_000} s`);
    await runClosedLoop(concurrency, warmupMs, (n) => peer.runOne(n));
    if (cpuOnly) {
      await measureCpu(concurrency, seconds, (n) => peer.runOne(n));
      return;
    }
    if (countTurns) {
      await measureAsyncWork(concurrency, seconds, (n) => peer.runOne(n));
      return;
    }
    if (allocations) {
      await measureAllocations(concurrency, seconds, (n) => peer.runOne(n));
      return;
    }
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    const cpuBefore = process.cpuUsage();
    progress(`profiling: c=${concurrency}, ${seconds} s`);
    const loop = await runClosedLoop(concurrency, seconds * 1_000, (n) => peer.runOne(1_000_000 + n));
    const cpu = process.cpuUsage(cpuBefore);
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    const file = `hot-path-c${concurrency}.cpuprofile`;
    writeFileSync(file, JSON.stringify(profile));
    const cpuMs = (cpu.user + cpu.system) / 1_000;
    console.log(
      `c=${concurrency}: ${loop.flows} flows in ${(loop.windowMs / 1_000).toFixed(1)} s = ` +
        `${((loop.flows * 1_000) / loop.windowMs).toFixed(1)} flows/s; Node CPU ${(cpuMs / loop.flows).toFixed(2)} ms/flow ` +
        `(${(cpuMs / loop.windowMs).toFixed(2)} of a core); profile: ${file}`,
    );
    console.log(renderBuckets(profile));
  } finally {
    await peer.close();
  }
}

/** DBOS's bench flow in this process for 3 s, on a database of its own, then shut down. */
async function runDbosFirst(adminUrl: string, concurrency: number): Promise<void> {
  await dbosPeer.prepareTemplate(adminUrl, 'profile_dbos_template');
  const url = await createDatabase(adminUrl, uniqueDatabaseName('profile_dbos'), { template: 'profile_dbos_template' });
  const peer = await dbosPeer.open(url, concurrency);
  try {
    progress(`DBOS first: c=${concurrency}, 3 s`);
    await runClosedLoop(concurrency, 3_000, (n) => peer.runOne(n));
  } finally {
    await peer.close();
  }
}

/** The measured window without the profiler: Node CPU per flow, and how much of it is the kernel's. */
async function measureCpu(concurrency: number, seconds: number, runOne: (n: number) => Promise<void>) {
  progress(`measuring CPU: c=${concurrency}, ${seconds} s, no profiler`);
  const threadsBefore = splitCpuByThread();
  const cpuBefore = process.cpuUsage();
  const loop = await runClosedLoop(concurrency, seconds * 1_000, (n) => runOne(1_000_000 + n));
  const cpu = process.cpuUsage(cpuBefore);
  const threadsAfter = splitCpuByThread();
  const perFlow = (us: number) => (us / 1_000 / loop.flows).toFixed(3);
  const byThread =
    threadsBefore && threadsAfter
      ? `; main thread ${perFlow((threadsAfter.mainMs - threadsBefore.mainMs) * 1_000)}, other threads ` +
        `${perFlow((threadsAfter.otherMs - threadsBefore.otherMs) * 1_000)} (10 ms ticks)`
      : '';
  console.log(
    `c=${concurrency}: ${loop.flows} flows in ${(loop.windowMs / 1_000).toFixed(1)} s = ` +
      `${((loop.flows * 1_000) / loop.windowMs).toFixed(1)} flows/s; Node CPU ${perFlow(cpu.user + cpu.system)} ms/flow ` +
      `(user ${perFlow(cpu.user)}, system ${perFlow(cpu.system)}${byThread})`,
  );
}

/**
 * The measured window under V8's sampling heap profiler, collected objects included: bytes allocated
 * per flow, by the function that allocated them (self), the largest first. What the garbage collector
 * (on the main thread and its helpers) has to sweep up after each flow.
 */
async function measureAllocations(concurrency: number, seconds: number, runOne: (n: number) => Promise<void>) {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  progress(`sampling allocations: c=${concurrency}, ${seconds} s`);
  const loop = await runClosedLoop(concurrency, seconds * 1_000, (n) => runOne(1_000_000 + n));
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  const bySite = new Map<string, number>();
  let total = 0;
  const walk = (node: (typeof profile)['head']): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    const site = `${functionName || '(anonymous)'} ${url.replace(/.*node_modules\/\.pnpm\/([^/_]+).*/, '$1').replace(/.*\/(packages|bench)\//, '$1/')}:${lineNumber + 1}`;
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    total += node.selfSize;
    node.children.forEach(walk);
  };
  walk(profile.head);
  const perFlow = (bytes: number) => (bytes / loop.flows).toFixed(0);
  console.log(`c=${concurrency}: ${loop.flows} flows; ${perFlow(total)} bytes allocated per flow (sampled); by site:`);
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 50))
    console.log(`  ${perFlow(bytes).padStart(7)}  ${site}`);
}

/** The measured window with async_hooks on: what a flow schedules (timers, immediates, ticks, promises), per flow. */
async function measureAsyncWork(concurrency: number, seconds: number, runOne: (n: number) => Promise<void>) {
  progress(`counting async work: c=${concurrency}, ${seconds} s`);
  const stop = countAsyncWork();
  const loop = await runClosedLoop(concurrency, seconds * 1_000, (n) => runOne(1_000_000 + n));
  const { byType, timersBySite } = stop();
  const perFlow = (n: number) => (n / loop.flows).toFixed(2);
  console.log(`c=${concurrency}: ${loop.flows} flows; async resources per flow by type:`);
  for (const [type, n] of [...byType].sort((a, b) => b[1] - a[1])) console.log(`  ${type.padEnd(24)} ${perFlow(n)}`);
  console.log('timers, immediates and promises per flow, by where they were made (the first 60):');
  for (const [site, n] of [...timersBySite].sort((a, b) => b[1] - a[1]).slice(0, 60))
    console.log(`  ${perFlow(n).padStart(6)}  ${site}`);
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  hitCount?: number;
}

/** Which part of the process a sampled function belongs to, by its source URL. */
const buckets: [string, (url: string, fn: string) => boolean][] = [
  ['Prisma runtime (@prisma/client, adapter)', (u) => /@prisma[+/]|prisma-adapter|adapter-pg/.test(u)],
  ['Prisma generated client', (u) => u.includes('/generated/prisma/')],
  [
    'pg driver (pg, pg-protocol, pg-pool)',
    (u) => /\/pg(-protocol|-pool|-types)?[@/]/.test(u) || /node_modules\/\.pnpm\/pg/.test(u),
  ],
  ['pino', (u) => u.includes('pino')],
  ['engine code (packages/engine, built or not)', (u) => /\/packages\/engine\/(src|dist)\//.test(u)],
  ['bench harness', (u) => u.includes('/bench/src/')],
  ['tsx / esbuild / source maps', (u) => /tsx|esbuild|source-map/.test(u)],
  ['garbage collector', (_u, f) => f === '(garbage collector)'],
  ['program (V8 and native, unattributed)', (_u, f) => f === '(program)'],
  ['Node internals (node:*, sockets, timers)', (u) => u.startsWith('node:') || u === ''],
  ['other node_modules', (u) => u.includes('node_modules')],
];

function renderBuckets(profile: { nodes: ProfileNode[] }): string {
  const hits = new Map<string, number>();
  const fnHits = new Map<string, number>();
  let busy = 0;
  for (const node of profile.nodes) {
    const n = node.hitCount ?? 0;
    const { functionName: fn, url } = node.callFrame;
    if (n === 0 || fn === '(idle)') continue;
    busy += n;
    const bucket = buckets.find(([, test]) => test(url, fn))?.[0] ?? 'other';
    hits.set(bucket, (hits.get(bucket) ?? 0) + n);
    const key = `${fn || '(anonymous)'} ${url.replace(/.*node_modules\/\.pnpm\/([^/_]+).*/, '$1').replace(/.*\/(packages|bench)\//, '$1/')}`;
    fnHits.set(key, (fnHits.get(key) ?? 0) + n);
  }
  const pct = (n: number) => `${((100 * n) / busy).toFixed(1)} %`;
  const rows = [...hits].sort((a, b) => b[1] - a[1]).map(([k, n]) => `| ${k} | ${pct(n)} |`);
  const top = [...fnHits]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([k, n]) => `| ${k} | ${pct(n)} |`);
  return [
    `self time by bucket (${busy} busy samples)`,
    '| bucket | share |',
    '| --- | ---: |',
    ...rows,
    '',
    'top functions by self time',
    '| function | share |',
    '| --- | ---: |',
    ...top,
  ].join('\n');
}

await main();
