import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { seedKnownSet, type KnownSet } from './support/seed-known-set.ts';
import { apiClient, rejection, signedInClient, testDatabaseUrl } from './support/test-plane.ts';
import { readOverview } from '../src/api/overview/read-overview.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';
import { migratedDataDir } from './support/migrated-data-dir.ts';

const settings = {
  postgres: async () => ({ DATABASE_URL: await testDatabaseUrl('overview') }),
  pglite: () => migratedDataDir('overview').then((dir) => ({ SAGAFLOW_DATA_DIR: dir })),
};

describe.each(['postgres', 'pglite'] as const)('readOverview on %s', (kind) => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane(parseEnv({ ...(await settings[kind]()), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('an empty database is all zeros, with no states and an outbox without lag', async () => {
    expect(await readOverview(plane.db)).toEqual({
      at: expect.any(String) as string,
      runs: { total: 0, byStatus: {}, exactUpTo: 1000, estimated: [] },
      stuck: { total: 0, byReason: {} },
      instances: { active: 0, quarantined: 0, failing: 0, failingTimeouts: 0, byState: [] },
      outbox: { pending: 0, dead: 0, oldestPendingAgeSeconds: 0 },
      approvals: { pending: 0 },
    });
  });

  it('after the known set: runs by status, stuck by reason, instances by state with the stalest, outbox lag', async () => {
    const known: KnownSet = await seedKnownSet(plane);
    const at = new Date(known.t0 + 10_000);
    const overview = await readOverview(plane.db, { now: () => at });
    expect(overview).toEqual({
      at: at.toISOString(),
      runs: { total: 4, byStatus: { Completed: 3, [known.ghostStatus]: 1 }, exactUpTo: 1000, estimated: [] },
      stuck: { total: 1, byReason: { unknown_flow: 1 } },
      instances: {
        active: 2,
        quarantined: 1,
        // The quarantined one's failure record counts it as quarantined, not failing (ADR 0127).
        failing: 0,
        failingTimeouts: 0,
        byState: [
          {
            process: 'metrics.proc',
            state: 'AwaitingPayment',
            active: 2,
            quarantined: 0,
            failing: 0,
            failingTimeouts: 0,
            // The stalest of the two (updated 120 s before t0), measured at t0 + 10 s.
            oldestActiveSeconds: 130,
            oldestQuarantinedSeconds: null,
          },
          {
            process: 'metrics.proc',
            state: 'Shipping',
            active: 0,
            quarantined: 1,
            failing: 0,
            failingTimeouts: 0,
            oldestActiveSeconds: null,
            oldestQuarantinedSeconds: 610,
          },
        ],
      },
      outbox: { pending: 1, dead: 1, oldestPendingAgeSeconds: 110 },
      approvals: { pending: 0 },
    });

    // Through the API: a viewer reads the same counts with overview.get; no session is a 401.
    const api = await signedInClient(plane, 'viewer');
    const served = await api.overview.get.query();
    expect({ runs: served.runs, stuck: served.stuck, active: served.instances.active }).toEqual({
      runs: overview.runs,
      stuck: overview.stuck,
      active: overview.instances.active,
    });
    expect(served.instances.quarantined).toBe(1);
    expect(await rejection(apiClient(plane.url).overview.get.query())).toMatchObject({ status: 401 });
  });

  it('a status with more runs than it counts one by one is estimated from the statistics, and says so (ADR 0036)', async () => {
    await plane.db.prisma.$executeRaw`
      insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input)
      select 'overview.many', 1, 'Failed', '{}'::jsonb from generate_series(1, 3000)`;
    const before = await readOverview(plane.db);
    // Whatever the statistics say yet, the figure is never below the bound it is known to pass.
    expect(before.runs.estimated).toEqual(['Failed']);
    expect(before.runs.byStatus.Failed).toBeGreaterThanOrEqual(1001);

    await plane.db.prisma.$executeRaw`analyze "sagaflow"."flow_runs"`;
    const after = await readOverview(plane.db);
    expect(after.runs.estimated).toEqual(['Failed']);
    // ANALYZE sampled every row of a table this small: the estimate is the count.
    expect(after.runs.byStatus.Failed).toBe(3000);
    // The small statuses stay exact.
    expect(after.runs.byStatus.Completed).toBe(3);
  });
});
