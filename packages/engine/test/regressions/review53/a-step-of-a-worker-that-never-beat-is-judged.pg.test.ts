import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { unbeatenConfig, unbeatenFlow } from './support/unbeaten-flow.ts';

const workerScript = fileURLToPath(new URL('./support/unbeaten-worker.ts', import.meta.url));
const WAIT_MS = 25_000;

/**
 * Review 53, defect 1. A worker pool's heartbeat is a row it upserts in `sagaflow.workers` (ADR 0010), and
 * the monitor judges a Running step's owner gone only by that row. A pool used to claim jobs and run
 * steps whether or not its first beat had landed: with its beats failing at start-up (here the test holds
 * a SHARE lock on the workers table and the database has `lock_timeout` 200 ms, so each beat's insert
 * gives up; a pool starved of connections fails it the same way) and a SIGKILL before one landed, its step
 * stayed Running under a worker the database never heard of, with no reason, and `reclaimStep` refused it.
 * Now a pool claims nothing and takes no start until its first beat has committed: the worker that never
 * registered held nothing, and once the trouble is over another worker runs the run to its end.
 */
describe('review 53: a worker whose first heartbeat never landed (real PostgreSQL, real process)', () => {
  const suite = childWorkerSuite();

  it('claims nothing while its beats fail, so after its SIGKILL the run is finished by another worker, each step once', async () => {
    const { db } = suite;
    const waitingBeats = async () => {
      const r = await db.pool!.query<{ n: string }>(
        `select count(*) as n from pg_locks l join pg_class c on c.oid = l.relation
          where c.relname = 'workers' and not l.granted`,
      );
      return Number(r.rows[0]?.n);
    };
    // The trouble: the workers table is locked, so the child's beats wait and give up.
    const locker = await db.pool!.connect();
    const dbName = (await locker.query<{ d: string }>('select current_database() as d')).rows[0]!.d;
    await locker.query(`alter database "${dbName}" set lock_timeout = '200ms'`);
    let locked = true;
    const unlock = async () => {
      if (!locked) return;
      locked = false;
      await locker.query('rollback');
      await locker.query(`alter database "${dbName}" reset lock_timeout`);
      locker.release();
    };
    suite.onClose(unlock);
    await locker.query('begin');
    await locker.query('lock table "sagaflow"."workers" in share mode');

    const { flow, actions } = unbeatenFlow(async () => 'by-test-process');
    const engine = suite.adopt(
      createEngine({ db, flows: [flow], actions, config: unbeatenConfig, logger: pino({ level: 'silent' }) }),
    );
    // Queued before the child starts: its pool (polling every 25 ms) would claim it at its first poll.
    const { runId } = await engine.startFlow(flow, null);
    const child = await suite.spawn(workerScript);
    // Progress: one beat of the child waits on the lock, gives up, and the next one waits again. By then
    // its pool has been running for a heartbeat interval, some polls' worth.
    for (const want of ['waiting', 'given up', 'waiting again'] as const)
      await waitFor(
        `a beat of the child's to be ${want}`,
        async () => ((await waitingBeats()) > 0 === (want !== 'given up') ? true : undefined),
        WAIT_MS,
      );
    const held = await db.prisma.actionRun.findMany({ where: { run_id: runId } });
    expect(held.filter((s) => s.claimed_by === child.workerId)).toEqual([]);
    expect(await db.prisma.job.count({ where: { run_id: runId, locked_by: child.workerId } })).toBe(0);

    await child.kill();
    await waitFor(
      "the dead child's last beat to give up",
      async () => ((await waitingBeats()) === 0 ? true : undefined),
      WAIT_MS,
    );
    await unlock();
    expect(await db.prisma.worker.findUnique({ where: { id: child.workerId } })).toBeNull();

    // The trouble is over: a worker of the test's runs the run to its end, each step once.
    engine.startWorkers();
    const run = await waitFor(
      'the run to end',
      async () => {
        const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        return r.finished_at !== null ? r : undefined;
      },
      WAIT_MS,
    );
    expect({ status: run.status, output: run.output }).toEqual({ status: 'Completed', output: 'by-test-process' });
    const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    expect(steps.map((s) => [s.name, s.status, s.attempts])).toEqual([
      ['r53-unbeaten-charge', 'Completed', 1],
      ['r53-unbeaten-ship', 'Completed', 1],
    ]);
  }, 60_000);
});
