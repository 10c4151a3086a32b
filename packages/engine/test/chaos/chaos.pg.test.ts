import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createDatabase as createPgDatabase, startCluster, type PgCluster } from '@sagaflow/test-postgres';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, createEngine, migrate, type Database } from '../../src/index.ts';
import { chaosActions, chaosConfig, chaosFlow, type ChaosInput } from './chaos-flow.ts';
import { compiledEngineScript, compiledEnv } from '../support/compiled.ts';

const RUNS = 500;
const WORKERS = 3;
/** The fault schedule follows progress, not the clock: a worker dies each time this many more runs finish… */
const KILL_EVERY = 20;
/** …and PostgreSQL restarts once, when this many have finished. */
const RESTART_AT = RUNS / 2;
/**
 * The test fails only when nothing moves for this long (no event appended to any run), not after a
 * total time: on a loaded machine it just takes longer. 2 minutes is 40 times the reclaim window.
 */
const STALL_MS = 120_000;
/** A backstop for vitest only; the stall rule above is what decides. */
const BACKSTOP_MS = 45 * 60_000;
const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const workerScript = fileURLToPath(new URL('./chaos-worker.ts', import.meta.url));

/**
 * Issue 4's chaos test: three worker processes on a real PostgreSQL, 500 runs of a 4-step flow with
 * compensations and random business failures, a random worker SIGKILLed (and restarted) each time
 * another 20 runs finish, and one PostgreSQL restart when half have finished. Afterwards, from the
 * database alone: every run terminal, no terminal state overwritten, at most one outcome per step,
 * every compensation done exactly once. Faults are scheduled by progress (issue 13, item 12), so a
 * loaded machine makes it slower, never red; it fails only if a guarantee breaks or nothing moves.
 */
describe('chaos: SIGKILLed workers and a PostgreSQL restart (real PostgreSQL, real processes)', () => {
  let cluster: PgCluster;
  let db: Database;
  let url = '';
  const workers: (ChildProcess | null)[] = [];
  const ready = new WeakSet<ChildProcess>();
  beforeAll(async () => {
    cluster = await startCluster();
    url = await createPgDatabase(cluster.adminUrl, 'chaos');
    db = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
    await migrate(db);
  }, 300_000);
  afterAll(async () => {
    for (const w of workers) w?.kill('SIGKILL');
    await db?.close().catch(() => undefined);
    await cluster?.stop();
  });

  const startWorker = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [compiledEngineScript(workerScript), url], {
        cwd: repoRoot,
        env: compiledEnv(),
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      workers[i] = child;
      child.stdout.once('data', () => {
        ready.add(child);
        resolve();
      });
      child.once('exit', (code, signal) => {
        if (workers[i] === child) workers[i] = null;
        if (code !== null && code !== 0) reject(new Error(`chaos worker ${i} exited with ${code} (${signal})`));
        else resolve();
      });
    });

  it(
    'every run ends terminal, once, with at most one outcome per step and every compensation done exactly once',
    async () => {
      const t0 = Date.now();
      const starter = createEngine({
        db,
        flows: [chaosFlow],
        actions: chaosActions,
        config: chaosConfig,
        logger: pino({ level: 'silent' }),
      });
      const stepNames = ['chaos-1', 'chaos-2', 'chaos-3', 'chaos-4'];
      for (let n = 1; n <= RUNS; n++) {
        const refusedAt =
          Math.random() < 0.15 ? (stepNames[Math.floor(Math.random() * stepNames.length)] ?? null) : null;
        await starter.startFlow(chaosFlow, { n, refusedAt });
      }
      await Promise.all(Array.from({ length: WORKERS }, (_, i) => startWorker(i)));

      let kills = 0;
      let restarts = 0;
      let nextKillAt = KILL_EVERY;
      const restartsOfWorkers: Promise<void>[] = [];
      /** Open runs and the events appended so far; null while PostgreSQL is restarting. */
      const progress = async () => {
        try {
          const [open, events] = await Promise.all([
            db.prisma.flowRun.count({ where: { status: { in: ['Pending', 'Running', 'Waiting', 'Compensating'] } } }),
            db.prisma.flowEvent.count(),
          ]);
          return { open, events };
        } catch {
          return null;
        }
      };
      let remaining = RUNS;
      let eventCount = -1;
      let movedAt = Date.now();
      let longestStallMs = 0;
      while (remaining !== 0 && Date.now() - movedAt < STALL_MS) {
        await new Promise((r) => setTimeout(r, 250));
        const now = await progress();
        if (!now) continue;
        if (now.events !== eventCount) {
          longestStallMs = Math.max(longestStallMs, Date.now() - movedAt);
          eventCount = now.events;
          movedAt = Date.now();
        }
        remaining = now.open;
        const finished = RUNS - remaining;
        if (remaining === 0) break;
        if (restarts === 0 && finished >= RESTART_AT) {
          restarts += 1;
          await cluster.restart();
          continue;
        }
        // A random live worker dies mid-step (every worker is busy while runs are open); its
        // replacement boots while the others go on. One always stays up, so the run never stalls on boots.
        const alive = workers.flatMap((w, i) => (w && ready.has(w) ? [i] : []));
        if (finished >= nextKillAt && alive.length >= 2) {
          const victim = alive[Math.floor(Math.random() * alive.length)] ?? 0;
          workers[victim]?.kill('SIGKILL');
          workers[victim] = null;
          kills += 1;
          nextKillAt += KILL_EVERY;
          restartsOfWorkers.push(startWorker(victim));
        }
      }
      await Promise.all(restartsOfWorkers);
      if (remaining !== 0) {
        const stuck = await db.prisma.flowRun.findMany({
          where: { status: { in: ['Pending', 'Running', 'Waiting', 'Compensating'] } },
          select: {
            id: true,
            status: true,
            waiting_for: true,
            stuck_reason: true,
            actions: { select: { sequence: true, status: true, attempts: true, claimed_by: true } },
          },
          take: 5,
        });
        const jobs = await db.prisma.job.count();
        console.log(
          `no progress for ${STALL_MS / 1000} s: open runs`,
          remaining,
          'jobs',
          jobs,
          JSON.stringify(stuck, null, 1),
        );
      }
      expect(remaining).toBe(0);
      // The faults happened: progress reached every point of the schedule before the last run ended.
      expect(restarts).toBe(1);
      expect(kills).toBeGreaterThan(0);

      // Everything below is read from the database alone.
      const runs = await db.prisma.flowRun.findMany({ select: { id: true, status: true, input: true } });
      const events = await db.prisma.flowEvent.findMany({
        select: { run_id: true, type: true, sequence: true, row_id: true },
        orderBy: { id: 'asc' },
      });
      const steps = await db.prisma.actionRun.findMany({ where: { kind: 'action' } });
      const comps = await db.prisma.compensationRun.findMany();
      const anomalies = await db.prisma.anomalyLog.groupBy({ by: ['code'], _count: true });
      const byRun = new Map<string, typeof events>();
      for (const e of events) byRun.set(e.run_id, [...(byRun.get(e.run_id) ?? []), e]);

      expect(runs).toHaveLength(RUNS);
      const refusedAtOf = (run: { input: unknown }) => (run.input as ChaosInput).refusedAt;
      for (const run of runs) {
        // Business outcome, from the refusal drawn at start: refused at step 1 → Failed (nothing to
        // undo); at a later step → Compensated; not refused → Completed.
        const refusedAt = refusedAtOf(run);
        expect(run.status).toBe(refusedAt === null ? 'Completed' : refusedAt === 'chaos-1' ? 'Failed' : 'Compensated');
        // No terminal state overwritten: exactly one terminal event, matching the row, and nothing
        // run-level recorded after it.
        const runEvents = (byRun.get(run.id) ?? []).filter((e) => e.type.startsWith('run.'));
        const terminal = runEvents.filter((e) =>
          [
            'run.completed',
            'run.failed',
            'run.compensated',
            'run.cancelled',
            'run.terminated',
            'run.timedout',
          ].includes(e.type),
        );
        expect(terminal.map((e) => e.type)).toEqual([`run.${run.status.toLowerCase()}`]);
        expect(runEvents.at(-1)?.type).toBe(`run.${run.status.toLowerCase()}`);
      }
      // At most one recorded outcome per step, and the row agrees with it.
      const outcomes = new Map<string, string[]>();
      for (const e of events) {
        if (!e.row_id || !/^(action|compensation)\.(completed|failed)$/.test(e.type)) continue;
        outcomes.set(e.row_id, [...(outcomes.get(e.row_id) ?? []), e.type]);
      }
      for (const s of steps) {
        const recorded = outcomes.get(s.id) ?? [];
        expect(recorded.length).toBeLessThanOrEqual(1);
        if (s.status === 'Completed') expect(recorded).toEqual(['action.completed']);
        if (s.status === 'Errored') expect(recorded).toEqual(['action.failed']);
      }
      // Every compensation of a refused run done exactly once in the record, newest first.
      for (const run of runs.filter((r) => r.status === 'Compensated')) {
        const refusedAt = Number((refusedAtOf(run) ?? 'chaos-0').slice('chaos-'.length));
        const mine = comps.filter((c) => c.run_id === run.id).sort((a, b) => a.ordinal - b.ordinal);
        const expected = Array.from({ length: refusedAt - 1 }, (_, i) => [`undo-${refusedAt - 1 - i}`, 'Completed']);
        expect(mine.map((c) => [c.name, c.status])).toEqual(expected);
        for (const c of mine) expect(outcomes.get(c.id)).toEqual(['compensation.completed']);
      }
      expect(comps.filter((c) => !runs.some((r) => r.id === c.run_id && r.status === 'Compensated'))).toEqual([]);

      // No step here fails retryably (a refusal is final), so a step claimed more than once was reclaimed.
      const reclaims = steps.filter((s) => s.attempts > 1).length + comps.filter((c) => c.attempts > 1).length;
      const outcomesByStatus = ['Completed', 'Compensated', 'Failed']
        .map((st) => `${st} ${runs.filter((r) => r.status === st).length}`)
        .join(', ');
      const table = [
        '| runs (by outcome) | kills | PostgreSQL restarts | reclaims (steps claimed again) | anomalies by code | longest stall | wall time |',
        '| --- | ---: | ---: | ---: | --- | ---: | ---: |',
        `| ${RUNS} (${outcomesByStatus}) | ${kills} | ${restarts} | ${reclaims} | ${anomalies.map((a) => `${a.code} ${a._count}`).join(', ') || 'none'} | ${(longestStallMs / 1000).toFixed(1)} s | ${((Date.now() - t0) / 1000).toFixed(1)} s |`,
      ].join('\n');
      console.log(`\nchaos summary\n${table}\n`);
    },
    BACKSTOP_MS,
  );
});
