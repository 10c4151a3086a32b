import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, migrate } from '@sagaflow/engine';
import { createBenchFlow } from './bench-flow.ts';
import { createBenchEngine } from './open-bench-engine.ts';
import { progress } from './progress.ts';
import { runClosedLoop } from './run-closed-loop.ts';
import { driveEngine } from './sagaflow-peer.ts';

/**
 * `pnpm --filter @sagaflow/bench run bench:profile-pglite [concurrency] [seconds] [--cpu-only] [--data-dir]`:
 * the engine on embedded PGlite (in memory, or on a fresh data directory) under V8's sampling
 * profiler, in a process where nothing else ran: the bench's closed loop of the 3-step no-op flow at
 * `concurrency` (8), a 3 s warm-up, then the profiled window. PGlite's PostgreSQL runs in this
 * process, so the report splits the busy samples into PGlite (its WebAssembly and its JavaScript),
 * the engine, Prisma, the pg helpers and Node, and lists the top functions by self time: what is the
 * engine's to cut and what is the database's. The `.cpuprofile` is written to the working directory.
 * `--cpu-only` measures the same window without the profiler (whose sampling thread adds to
 * process.cpuUsage()): the figure to compare before/after a change, alternated (ADR 0055).
 */
async function main(): Promise<void> {
  const concurrency = Number(process.argv[2] ?? 8);
  const seconds = Number(process.argv[3] ?? 10);
  const flags = new Set(process.argv.slice(4));
  const dataDir = flags.has('--data-dir') ? await mkdtemp(join(tmpdir(), 'sagaflow-profile-pglite-')) : undefined;
  const db = await createDatabase({ kind: 'pglite', dataDir });
  const bench = createBenchFlow();
  try {
    await migrate(db).catch(async (error: unknown) => {
      await db.close();
      throw error;
    });
    // Closing the peer stops the engine and closes `db`.
    const peer = driveEngine(bench, db, createBenchEngine(db, concurrency, bench));
    try {
      progress(`warm-up: PGlite ${dataDir ? 'data directory' : 'memory'}, c=${concurrency}, 3 s`);
      await runClosedLoop(concurrency, 3_000, (n) => peer.runOne(n));
      const session = flags.has('--cpu-only') ? null : new Session();
      if (session) {
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: 200 });
        await session.post('Profiler.start');
      }
      progress(`measuring: c=${concurrency}, ${seconds} s${session ? ', profiled' : ', no profiler'}`);
      const cpuBefore = process.cpuUsage();
      const loop = await runClosedLoop(concurrency, seconds * 1_000, (n) => peer.runOne(1_000_000 + n));
      const cpu = process.cpuUsage(cpuBefore);
      const perFlow = (us: number) => (us / 1_000 / loop.flows).toFixed(2);
      const p50 = [...loop.latenciesMs].sort((a, b) => a - b)[Math.floor(loop.flows / 2)] ?? Number.NaN;
      console.log(
        `PGlite c=${concurrency}: ${loop.flows} flows in ${(loop.windowMs / 1_000).toFixed(1)} s = ` +
          `${((loop.flows * 1_000) / loop.windowMs).toFixed(1)} flows/s, p50 ${p50.toFixed(1)} ms; CPU ` +
          `${perFlow(cpu.user + cpu.system)} ms/flow (user ${perFlow(cpu.user)}, system ${perFlow(cpu.system)})`,
      );
      if (!session) return;
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      const file = `pglite-c${concurrency}.cpuprofile`;
      writeFileSync(file, JSON.stringify(profile));
      console.log(`profile: ${file}\n${renderShares(profile.nodes)}`);
    } finally {
      await peer.close();
    }
  } finally {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
}

interface ProfileNode {
  callFrame: { functionName: string; url: string };
  hitCount?: number;
}

/** Where a sampled function lives: PGlite's own parts first, then the engine's, then the rest. */
const parts: [string, (url: string, fn: string) => boolean][] = [
  ['PGlite WebAssembly (PostgreSQL itself)', (u) => u.startsWith('wasm://')],
  ['PGlite JavaScript (@electric-sql/pglite)', (u) => u.includes('@electric-sql')],
  ['Prisma (client runtime, adapter, generated client)', (u) => /@prisma|prisma-adapter|\/generated\/prisma\//.test(u)],
  ['engine code (packages/engine, built or not)', (u) => /\/packages\/engine\/(src|dist)\//.test(u)],
  ['bench harness', (u) => u.includes('/bench/src/')],
  ['garbage collector', (_u, f) => f === '(garbage collector)'],
  ['program (V8 and native, unattributed)', (_u, f) => f === '(program)'],
  ['Node internals (node:*, timers, microtasks)', (u) => u.startsWith('node:') || u === ''],
  ['other node_modules', (u) => u.includes('node_modules')],
];

/** Busy samples (idle excluded) by part, and the 30 functions with the most self time. */
function renderShares(nodes: readonly ProfileNode[]): string {
  const byPart = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  for (const { callFrame, hitCount = 0 } of nodes) {
    const { functionName: fn, url } = callFrame;
    if (hitCount === 0 || fn === '(idle)') continue;
    busy += hitCount;
    const part = parts.find(([, test]) => test(url, fn))?.[0] ?? 'other';
    byPart.set(part, (byPart.get(part) ?? 0) + hitCount);
    const where = url.replace(/.*node_modules\/\.pnpm\/([^/]+)\/.*/, '$1').replace(/.*\/(packages|bench)\//, '$1/');
    const key = `${fn || '(anonymous)'} ${where}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + hitCount);
  }
  const share = ([name, n]: [string, number]) => `| ${name} | ${((100 * n) / busy).toFixed(1)} % |`;
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return [
    `busy samples: ${busy}`,
    '| part | share of busy samples |',
    '| --- | ---: |',
    ...sorted(byPart).map(share),
    '',
    '| function (self time) | share |',
    '| --- | ---: |',
    ...sorted(byFunction).slice(0, 30).map(share),
  ].join('\n');
}

await main();
