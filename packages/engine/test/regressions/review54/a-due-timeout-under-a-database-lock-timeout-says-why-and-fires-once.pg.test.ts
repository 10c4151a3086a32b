import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { createProcessManager, type ProcessManager } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { keptLogger } from '../review53/support/liveness.ts';
import { tallyProcess, tracesOf } from './support/tally-process.ts';

/**
 * Review 54: a process timeout comes due while its delivery cannot write (the outbox table is locked
 * by another session and the database has `lock_timeout` set). ADR 0127: it must show as the
 * instance's failingTimeout with the reason while the trouble lasts, and fire exactly once after.
 */
describe('review 54: a due process timeout whose delivery hits lock_timeout (real PostgreSQL)', () => {
  let admin: Database & { url?: string };
  let db: Database;
  let dbName = '';
  let pm: ProcessManager;
  let holder: pg.PoolClient | undefined;
  const kept = keptLogger();
  beforeAll(async () => {
    admin = await openTestDatabase({ poolSize: 2 });
    dbName = (await admin.pool!.query<{ d: string }>('select current_database() as d')).rows[0]!.d;
    await admin.pool!.query(`alter database "${dbName}" set lock_timeout = '200ms'`);
    db = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 3 });
    pm = createProcessManager({
      db,
      processes: [tallyProcess],
      // A process transaction sets its own lock_timeout, half its limit (ADR 0131), over the database's:
      // 1 s here, where the default limit's 15 s was this test's wait for the first failure to show.
      config: { timeout_retry_seconds: 1, timeout_retry_max_seconds: 1, transaction_timeout_ms: 2000 },
      logger: pino({ level: 'warn' }, kept.stream),
    });
  });
  afterAll(async () => {
    await holder?.query('rollback').catch(() => undefined);
    holder?.release();
    await pm?.stopTimeoutScheduler().catch(() => undefined);
    await db?.close();
    await admin?.pool?.query(`alter database "${dbName}" reset lock_timeout`).catch(() => undefined);
    await admin?.close();
  });

  it('a timeout that cannot be written says why while the lock lasts and fires once after', async () => {
    const key = 'r54-locked-timeout';
    const begun = await pm.deliver(tallyProcess, { id: `${key}-begin`, type: 'Begin', payload: { key } });
    const instanceId = begun.instanceId!;
    // The trouble: the outbox table is locked against inserts by another session.
    holder = await admin.pool!.connect();
    await holder.query('begin');
    await holder.query(`set local lock_timeout = 0`);
    await holder.query(`lock table "sagaflow"."outbox" in share mode`);
    pm.startTimeoutScheduler({ intervalMs: 100 });
    const failing = await waitFor('the timeout to show as failing, with its reason', async () => {
      const view = await pm.find(instanceId);
      return view?.failingTimeout ? view.failingTimeout : undefined;
    });
    expect(failing.lastError).toMatch(/lock timeout/i);
    await holder.query('rollback');
    holder.release();
    holder = undefined;
    const fired = await waitFor(
      'the timeout delivered once the lock is gone',
      async () => {
        const r = await admin.pool!.query<{ id: string; status: string }>(
          `select id::text, status from "sagaflow"."process_timeouts" where instance_id = $1`,
          [instanceId],
        );
        return r.rows[0]?.status === 'Delivered' ? r.rows[0].id : undefined;
      },
      10_000,
    );
    await pm.stopTimeoutScheduler();
    const view = await pm.find(instanceId);
    expect({
      nudges: (view?.state as { nudges: number } | null)?.nudges,
      failingTimeout: view?.failingTimeout ?? null,
    }).toEqual({
      nudges: 1,
      failingTimeout: null,
    });
    expect(await tracesOf(admin, [fired])).toEqual([{ message_id: fired, applied: 1, inbox: 1, outbox: 1 }]);
  });
});
