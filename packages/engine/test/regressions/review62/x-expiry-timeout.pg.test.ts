import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

describe('x', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  const capture = capturingLogger();
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({ db, flows: [waiter], actions, logger: capture.logger, config: { sweeps: { transaction_timeout_ms: Number(process.env.X_TT ?? 1000) } } });
  });
  afterAll(async () => {
    await t?.close();
    await db?.close();
  });
  it('x', async () => {
    const { runId } = await t.engine.startFlow(waiter, null, { expiresInSeconds: 60 });
    await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    await t.engine.stopWorkers();
    if (process.env.X_DEEP) {
      const [c] = await db.prisma.$queryRaw<{id:string}[]>`insert into sagaflow.flow_runs (flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
        values ('rep-waiter', 1, 'Waiting', '{}'::jsonb, ${runId}::uuid, 1, 'propagate') returning id::text`;
      await db.prisma.$executeRaw`insert into sagaflow.flow_runs (flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
        select 'rep-waiter', 1, 'Waiting', '{}'::jsonb, ${c!.id}::uuid, g, 'propagate' from generate_series(1, ${Number(process.env.X_DEEP)}::int) g`;
    } else
    await db.prisma.$executeRaw`insert into sagaflow.flow_runs (flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
      select 'rep-waiter', 1, 'Waiting', '{}'::jsonb, ${runId}::uuid, g, 'propagate' from generate_series(1, ${Number(process.env.X_N ?? 2000)}::int) g`;
    t.clock.advance(120_000);
    const started = performance.now();
    const r = await t.engine.sweepExpiredRuns().catch((e: unknown) => e);
    console.log('took', performance.now() - started, r);
    console.log(capture.lines.filter(l => typeof l.msg === 'string').map(l => l.msg));
    const row = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    console.log(row.status, row.stuck_reason, row.expiry_attempts, await db.prisma.anomalyLog.count());
    expect(1).toBe(1);
  }, 60_000);
});
