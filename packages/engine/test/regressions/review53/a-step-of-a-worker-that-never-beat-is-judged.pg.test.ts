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
 * Review 53: a worker pool's heartbeat is a row it upserts in `sagaflow.workers` (ADR 0010), and the
 * monitor judges a Running step gone only by that row ("an owner with no row at all is not judged").
 * A pool claims jobs and runs steps whether or not its first beat has landed. Trouble at the moment
 * a worker starts makes its beats fail (here: the test holds a SHARE lock on the workers table and the
 * database has `lock_timeout` 200 ms, set with ALTER DATABASE, so each beat's insert gives up; a pool
 * starved of connections, or a terminated connection, fails it the same way), and a SIGKILL before a
 * beat lands leaves the step Running under a worker the database never heard of. Once the trouble is
 * over, the run must say why it does not move, within the monitor's bound (dead_after_seconds and a
 * few passes), and the repair must be possible.
 */
describe('review 53: a step held by a worker killed before its first heartbeat landed (real PostgreSQL, real process)', () => {
  const suite = childWorkerSuite();

  it('a run whose step was held by a worker killed before its first beat landed says why, and the step can be reclaimed', async () => {
    const { db } = suite;
    // The trouble: the workers table is locked, so the child's first beat waits.
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

    const child = await suite.spawn(workerScript);
    const { flow, actions } = unbeatenFlow(async () => 'by-test-process');
    const engine = suite.adopt(
      createEngine({ db, flows: [flow], actions, config: unbeatenConfig, logger: pino({ level: 'silent' }) }),
    );
    const { runId } = await engine.startFlow(flow, null);
    await waitFor(
      'the child to hold the charge step',
      async () => {
        const s = await db.prisma.actionRun.findFirst({ where: { run_id: runId, name: 'r53-unbeaten-charge' } });
        return s?.status === 'Running' && s.claimed_by === child.workerId ? s : undefined;
      },
      WAIT_MS,
    );
    // Its beats wait behind the lock and give up at the lock_timeout (progress, read from pg_locks): it has no row.
    await waitFor(
      "the child's beat to wait on the workers table",
      async () => {
        const r = await db.pool!.query<{ n: string }>(
          `select count(*) as n from pg_locks l join pg_class c on c.oid = l.relation
            where c.relname = 'workers' and not l.granted`,
        );
        return Number(r.rows[0]?.n) > 0 ? true : undefined;
      },
      WAIT_MS,
    );
    await child.kill();
    // The killed worker's last beat gives up at its lock_timeout: wait for no insert to wait on the table.
    await waitFor(
      "the dead child's last beat to give up",
      async () => {
        const r = await db.pool!.query<{ n: string }>(
          `select count(*) as n from pg_locks l join pg_class c on c.oid = l.relation
            where c.relname = 'workers' and not l.granted`,
        );
        return Number(r.rows[0]?.n) === 0 ? true : undefined;
      },
      WAIT_MS,
    );
    await unlock();
    expect(await db.prisma.worker.findUnique({ where: { id: child.workerId } })).toBeNull();

    // The trouble is over. The monitor runs (every 100 ms); the dead worker counts as gone after
    // dead_after_seconds (2 s). Bound: 5 times that.
    engine.startMonitor({ intervalMs: 100 });
    const said = await waitFor(
      'the run to say why it does not move',
      async () => {
        const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        return r.stuck_reason !== null || r.waiting_for !== null || r.finished_at !== null ? r : undefined;
      },
      5 * unbeatenConfig.worker.dead_after_seconds * 1000,
    ).catch(() => null);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const step = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, name: 'r53-unbeaten-charge' } });
    expect
      .soft(
        { said: said !== null, status: run.status, stuckReason: run.stuck_reason, waitingFor: run.waiting_for },
        `the step is ${step.status} under ${step.claimed_by}, a worker that is dead and was never registered`,
      )
      .toMatchObject({ said: true });
    // The repair the reason offers works: the step is reclaimed and the run completes here.
    const reclaim = await engine.reclaimStep(runId, { stepId: step.id });
    expect(reclaim, JSON.stringify(reclaim)).toMatchObject({ reclaimed: true });
  }, 60_000);
});
