import { isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { createDatabase, startCluster, uniqueDatabaseName } from '@sagaflow/test-postgres';
import type { Database, Engine } from '@sagaflow/engine';
import { pino } from 'pino';
import { analyzeLikeAutovacuum, warmupFlowsBeforeAnalyze } from './analyze-like-autovacuum.ts';
import type { BenchFlow } from './bench-flow.ts';
import { prepareTemplateDatabase } from './prepare-template-database.ts';
import { progress } from './progress.ts';
import { readPostgresCpu } from './read-postgres-process-cpu.ts';
import { runClosedLoop } from './run-closed-loop.ts';
import { driveEngine } from './sagaflow-peer.ts';
import { withDurableServer } from './with-durable-server.ts';
import { withPgClient } from './with-pg-client.ts';
import { readFile } from 'node:fs/promises';

/**
 * `pnpm --filter @sagaflow/bench run bench:compare-builds <checkoutA> <checkoutB> [--c=1] [--windows=24]
 * [--window-seconds=1.5] [--warmup=5] [--durable] [--b-sql=<file>]`: Node CPU per flow of two builds of the engine
 * (each checkout's `packages/engine/dist`, built beforehand) in ONE process, on one throwaway server,
 * measured in short windows that alternate between them (A, B, B, A, …) and summed. Two processes
 * run one after the other differ by more than a small change is worth: this machine's speed drifts
 * over minutes (10–20 % between runs of `bench:profile --cpu-only`), and alternating windows of one
 * process see the same drift on both sides (ADR 0097). Both builds run the bench's 3-step no-op flow
 * at concurrency `c`, each against a database of its own made from one template (the schema must be
 * the same in both checkouts), each warmed up, analyzed and warmed up again as a bench phase is. The report: flows, Node CPU per flow (user and system) per build, and
 * B ÷ A, over all windows and over each half of them, so a drift inside the run shows; then the CPU of
 * each build's own backends per flow (from /proc, read at each window's ends) and its flows/s.
 * `--b-sql` compares a schema change instead: the file's SQL is run on B's database once it is made
 * (give the same checkout twice), so A has the migrations as they are and B has them plus the file.
 */

interface EngineModule {
  createDatabase: (options: { kind: 'postgres'; url: string; poolSize: number }) => Promise<unknown>;
  createEngine: (options: unknown) => unknown;
  defineAction: (definition: unknown) => unknown;
  defineFlow: (definition: unknown) => unknown;
}

interface Side {
  readonly label: string;
  /** Its database's name: its backends are `client backend@<name>` in pg_stat_activity. */
  readonly database: string;
  runOne(n: number): Promise<void>;
  close(): Promise<void>;
}

async function openSide(label: string, checkout: string, url: string, concurrency: number): Promise<Side> {
  const entry = pathToFileURL(join(checkout, 'packages/engine/dist/index.js')).href;
  const engineModule = (await import(entry)) as EngineModule;
  const noop = engineModule.defineAction({
    name: 'bench.noop',
    run: async (input: { n: number; step: number }) => ({ n: input.n, step: input.step }),
  });
  const flow = engineModule.defineFlow({
    name: 'bench.three-steps',
    version: 1,
    run: async (
      ctx: { action(a: unknown, i: unknown): PromiseLike<{ n: number }> },
      input: { n: number },
    ): Promise<unknown> => {
      const first = await ctx.action(noop, { n: input.n, step: 1 });
      const second = await ctx.action(noop, { n: first.n, step: 2 });
      return ctx.action(noop, { n: second.n, step: 3 });
    },
  });
  const db = await engineModule.createDatabase({ kind: 'postgres', url, poolSize: concurrency + 4 });
  const engine = engineModule.createEngine({
    db,
    flows: [flow],
    actions: [noop],
    config: { worker: { concurrency } },
    logger: pino({ name: `sagaflow-${label}`, level: 'warn' }, pino.destination(2)),
  });
  // Driven as the bench drives its own engine: the other build's objects, under this build's types.
  const peer = driveEngine(
    { flow, action: noop, actionTime: { calls: 0, ms: 0 } } as unknown as BenchFlow,
    db as Database,
    engine as Engine,
  );
  return {
    label,
    database: new URL(url).pathname.slice(1),
    runOne: (n) => peer.runOne(n),
    close: () => peer.close(),
  };
}

interface Tally {
  flows: number;
  userUs: number;
  systemUs: number;
  /** CPU of the side's own backends (their database's), nanoseconds. */
  postgresNs: number;
  /** Wall time of its windows. */
  ms: number;
}

const emptyTally = (): Tally => ({ flows: 0, userUs: 0, systemUs: 0, postgresNs: 0, ms: 0 });

/** Where the server is, to read its backends' CPU from /proc. */
interface Server {
  readonly dataDir: string;
  readonly adminUrl: string;
}

async function backendNs(server: Server, database: string): Promise<number> {
  const snapshot = await readPostgresCpu(server.dataDir, server.adminUrl);
  return snapshot.processes.filter((p) => p.kind === `client backend@${database}`).reduce((sum, p) => sum + p.runNs, 0);
}

async function measureWindow(side: Side, server: Server, ms: number, tally: Tally, from: number): Promise<number> {
  const postgresBefore = await backendNs(server, side.database);
  const started = performance.now();
  const before = process.cpuUsage();
  const loop = await runClosedLoop(concurrencyOf, ms, (n) => side.runOne(from + n));
  const cpu = process.cpuUsage(before);
  tally.ms += performance.now() - started;
  tally.postgresNs += (await backendNs(server, side.database)) - postgresBefore;
  tally.flows += loop.flows;
  tally.userUs += cpu.user;
  tally.systemUs += cpu.system;
  return loop.flows;
}

let concurrencyOf = 1;

function option(name: string, fallback: number): number {
  const flag = process.argv.find((a) => a.startsWith(`--${name}=`));
  if (flag === undefined) return fallback;
  const value = Number(flag.slice(name.length + 3));
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`bench:compare-builds: --${name} must be a positive number`);
  return value;
}

const perFlow = (t: Tally) => ({
  cpu: (t.userUs + t.systemUs) / 1_000 / t.flows,
  user: t.userUs / 1_000 / t.flows,
  system: t.systemUs / 1_000 / t.flows,
  postgres: t.postgresNs / 1e6 / t.flows,
  flowsPerSecond: (t.flows * 1_000) / t.ms,
});

async function main(): Promise<void> {
  const [a, b] = process.argv.slice(2).filter((x) => !x.startsWith('--'));
  if (a === undefined || b === undefined)
    throw new Error('usage: bench:compare-builds <checkoutA> <checkoutB> [--c=1] [--windows=24] [--durable]');
  const checkouts = [a, b].map((dir) => (isAbsolute(dir) ? dir : join(process.cwd(), dir)));
  concurrencyOf = option('c', 1);
  const windows = option('windows', 24);
  const windowMs = option('window-seconds', 1.5) * 1_000;
  const warmupMs = option('warmup', 5) * 1_000;
  const cluster = await startCluster({ log: (line) => progress(`test-postgres: ${line}`) });
  try {
    await prepareTemplateDatabase(cluster.adminUrl, 'compare_template');
    const urls = [
      await createDatabase(cluster.adminUrl, uniqueDatabaseName('compare_a'), { template: 'compare_template' }),
      await createDatabase(cluster.adminUrl, uniqueDatabaseName('compare_b'), { template: 'compare_template' }),
    ];
    const bSql = process.argv.find((x) => x.startsWith('--b-sql='))?.slice('--b-sql='.length);
    if (bSql !== undefined) {
      const text = await readFile(bSql, 'utf8');
      await withPgClient(urls[1]!, (c) => c.query(text));
      progress(`B's database: ${bSql} applied`);
    }
    const server: Server = { dataDir: cluster.dataDir, adminUrl: cluster.adminUrl };
    const run = async () => {
      const sides = [
        await openSide('A', checkouts[0]!, urls[0]!, concurrencyOf),
        await openSide('B', checkouts[1]!, urls[1]!, concurrencyOf),
      ];
      try {
        // As a bench phase does (ADR 0051): plans made for empty tables are not what a deployment runs.
        for (const [s, side] of sides.entries()) {
          progress(`warm-up ${side.label}: c=${concurrencyOf}, ${warmupMs / 1_000} s, then ANALYZE`);
          await runClosedLoop(concurrencyOf, warmupMs, (n) => side.runOne(n), {
            atLeastFlows: warmupFlowsBeforeAnalyze,
          });
          await analyzeLikeAutovacuum(urls[s]!);
          await runClosedLoop(concurrencyOf, warmupMs / 2, (n) => side.runOne(500_000 + n));
        }
        const halves = [
          [emptyTally(), emptyTally()],
          [emptyTally(), emptyTally()],
        ] as const;
        let n = 1_000_000;
        progress(`measuring: ${windows} windows of ${windowMs / 1_000} s, alternating A B B A`);
        for (let w = 0; w < windows; w++) {
          // A B, then B A: neither side always follows the other.
          const order = w % 2 === 0 ? [0, 1] : [1, 0];
          const half = halves[w < windows / 2 ? 0 : 1];
          for (const s of order) n += await measureWindow(sides[s]!, server, windowMs, half[s]!, n);
        }
        const total = [0, 1].map((s) => {
          const t = emptyTally();
          for (const half of halves) {
            t.flows += half[s]!.flows;
            t.userUs += half[s]!.userUs;
            t.systemUs += half[s]!.systemUs;
            t.postgresNs += half[s]!.postgresNs;
            t.ms += half[s]!.ms;
          }
          return t;
        });
        const line = (name: string, ta: Tally, tb: Tally) => {
          const pa = perFlow(ta);
          const pb = perFlow(tb);
          return (
            `${name.padEnd(12)} A ${pa.cpu.toFixed(3)} ms/flow (user ${pa.user.toFixed(3)}, system ${pa.system.toFixed(3)}, ${ta.flows} flows)` +
            `  B ${pb.cpu.toFixed(3)} ms/flow (user ${pb.user.toFixed(3)}, system ${pb.system.toFixed(3)}, ${tb.flows} flows)` +
            `  B/A ${(pb.cpu / pa.cpu).toFixed(3)} (user ${(pb.user / pa.user).toFixed(3)})`
          );
        };
        const serverLine = (name: string, ta: Tally, tb: Tally) => {
          const [pa, pb] = [perFlow(ta), perFlow(tb)];
          return (
            `${name.padEnd(12)} A ${pa.postgres.toFixed(3)} ms/flow, ${pa.flowsPerSecond.toFixed(0)} flows/s` +
            `  B ${pb.postgres.toFixed(3)} ms/flow, ${pb.flowsPerSecond.toFixed(0)} flows/s` +
            `  B/A ${(pb.postgres / pa.postgres).toFixed(3)}, flows/s ${(pb.flowsPerSecond / pa.flowsPerSecond).toFixed(3)}`
          );
        };
        console.log(`A = ${checkouts[0]}\nB = ${checkouts[1]}\nc=${concurrencyOf}, Node CPU per flow:`);
        console.log(line('all windows', total[0]!, total[1]!));
        console.log(line('first half', halves[0][0], halves[0][1]));
        console.log(line('second half', halves[1][0], halves[1][1]));
        console.log(`PostgreSQL CPU per flow (each side's own backends) and flows/s:`);
        console.log(serverLine('all windows', total[0]!, total[1]!));
        console.log(serverLine('first half', halves[0][0], halves[0][1]));
        console.log(serverLine('second half', halves[1][0], halves[1][1]));
      } finally {
        for (const side of sides) await side.close();
      }
    };
    if (process.argv.includes('--durable')) await withDurableServer(cluster, run);
    else await run();
  } finally {
    await cluster.stop();
  }
}

await main();
