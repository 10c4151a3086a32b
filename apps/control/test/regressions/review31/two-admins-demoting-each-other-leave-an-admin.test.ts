import { createDatabase, type Database } from '@sagaflow/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, rawCall, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const firstAdminPassword = 'the first admin password';

/**
 * ADR 0015: "An admin cannot change or disable itself, so the last admin cannot lock everyone out."
 * The role that allows a change is read when the request's session is resolved, before the change's
 * transaction. Here the two remaining admins demote each other at once. The interleaving is forced
 * by progress: a side transaction holds the row of `admin` (FOR UPDATE) so B's demotion of it waits
 * after B has been found an admin; meanwhile `admin` demotes B, which commits; then the row is let go.
 */
describe('two admins demoting each other at once', () => {
  let plane: ControlPlane;
  let side: Database;
  beforeAll(async () => {
    const url = await testDatabaseUrl('r31_last_admin');
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_ADMIN_PASSWORD: firstAdminPassword,
      }),
    );
    side = await createDatabase({ kind: 'postgres', url, poolSize: 2 });
  });
  afterAll(async () => {
    await plane.stop();
    await side.close();
  });

  const waitingOnLocks = async () =>
    (
      await side.prisma.$queryRawUnsafe<{ n: number }[]>(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query ilike '%operators%'`,
      )
    )[0]?.n ?? 0;

  it('leave at least one enabled admin: the second demotion, by an operator no longer admin, is refused', async () => {
    const a = await signInCookie(plane.url, 'admin', firstAdminPassword);
    const bName = await createTestOperator(plane, 'admin');
    const b = await signInCookie(plane.url, bName);

    let release = () => undefined as void;
    const released = new Promise<void>((r) => (release = r));
    let locked = () => undefined as void;
    const lockHeld = new Promise<void>((r) => (locked = r));
    const holder = side.prisma.$transaction(
      async (tx) => {
        await tx.$queryRawUnsafe(`select 1 from sagaflow.operators where name = 'admin' for update`);
        locked();
        await released;
      },
      { timeout: 60_000, maxWait: 10_000 },
    );
    await lockHeld;

    const bDemotesA = rawCall(plane.url, 'operators.setRole', {
      type: 'mutation',
      cookie: b,
      input: { name: 'admin', role: 'viewer' },
    });
    for (let i = 0; i < 400 && (await waitingOnLocks()) < 1; i++) await sleep(25);
    expect(await waitingOnLocks()).toBe(1);

    const aDemotesB = await rawCall(plane.url, 'operators.setRole', {
      type: 'mutation',
      cookie: a,
      input: { name: bName, role: 'viewer' },
    });
    expect(aDemotesB.status).toBe(200);
    release();
    await holder;
    const second = await bDemotesA;

    const admins = await plane.db.prisma.operator.findMany({
      where: { role: 'admin', disabled_at: null },
      select: { name: true },
    });
    expect({ second: second.status, admins: admins.map((o) => o.name) }).toEqual({ second: 403, admins: ['admin'] });
  });
});
