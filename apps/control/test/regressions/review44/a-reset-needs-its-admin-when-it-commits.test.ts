import { createDatabase, type Database } from '@sagaflow/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, rawCall, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `changeOperator` (ADR 0105, used by `operators.resetPassword` per ADR 0114) promises: "the acting
 * admin must still be an enabled admin when the change commits", and ADR 0105: "A signed-in admin
 * whose role was taken a moment ago can no longer finish an operator change it started". Both cases
 * here are forced by progress: a side transaction holds the target's row (FOR UPDATE), so the reset
 * waits after it has read its actor; it is seen waiting in pg_stat_activity; the other change is made
 * and commits; the row is let go.
 */
describe('an admin reset racing the loss of its admin', () => {
  let plane: ControlPlane;
  let side: Database;
  beforeAll(async () => {
    const url = await testDatabaseUrl('r44_reset_actor');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    side = await createDatabase({ kind: 'postgres', url, poolSize: 3 });
  });
  afterAll(async () => {
    await plane?.stop();
    await side?.close();
  });

  const waitingOnLocks = async () =>
    (
      await side.prisma.$queryRawUnsafe<{ n: number }[]>(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query ilike '%operators%'`,
      )
    )[0]?.n ?? 0;

  /** Holds `names`' operator rows FOR UPDATE until `release` is called. */
  async function holdRows(names: string[]) {
    let release = () => undefined as void;
    const released = new Promise<void>((r) => (release = r));
    let locked = () => undefined as void;
    const lockHeld = new Promise<void>((r) => (locked = r));
    const done = side.prisma.$transaction(
      async (tx) => {
        for (const n of names)
          await tx.$queryRawUnsafe(`select 1 from sagaflow.operators where name = $1 for update`, n);
        locked();
        await released;
      },
      { timeout: 60_000, maxWait: 10_000 },
    );
    await lockHeld;
    return async () => {
      release();
      await done;
    };
  }

  const reset = (cookie: string, name: string, newPassword: string) =>
    rawCall(plane.url, 'operators.resetPassword', { type: 'mutation', cookie, input: { name, newPassword } });

  it('DEFECT: an admin demoted (committed) while its reset of a third operator waits cannot finish the reset', async () => {
    const a = await createTestOperator(plane, 'admin');
    const b = await createTestOperator(plane, 'admin');
    const c = await createTestOperator(plane, 'operator');
    const aCookie = await signInCookie(plane.url, a);
    const bCookie = await signInCookie(plane.url, b);
    const hashBefore = (await plane.db.prisma.operator.findUnique({ where: { name: c } }))!.password_hash;

    const letGo = await holdRows([c]);
    const bResetsC = reset(bCookie, c, 'chosen by b who is no admin');
    for (let i = 0; i < 800 && (await waitingOnLocks()) < 1; i++) await sleep(25);
    expect(await waitingOnLocks(), 'b’s reset read its actor and waits on c’s row').toBe(1);

    const aDemotesB = await rawCall(plane.url, 'operators.setRole', {
      type: 'mutation',
      cookie: aCookie,
      input: { name: b, role: 'viewer' },
    });
    expect(aDemotesB.status).toBe(200);
    await letGo();
    const answer = await bResetsC;

    const hashAfter = (await plane.db.prisma.operator.findUnique({ where: { name: c } }))!.password_hash;
    const rows = await plane.db.prisma.auditEvent.count({ where: { action: 'operator_password_reset', target_id: c } });
    expect({ status: answer.status, hashChanged: hashAfter !== hashBefore, rows }).toEqual({
      status: 403,
      hashChanged: false,
      rows: 0,
    });
  });

  it('DEFECT: two admins resetting each other at once: the one whose sessions the other ended does not finish', async () => {
    const a = await createTestOperator(plane, 'admin');
    const b = await createTestOperator(plane, 'admin');
    const aCookie = await signInCookie(plane.url, a);
    const bCookie = await signInCookie(plane.url, b);

    // Both requests are signed in and past their actor read, each waiting on the other's row.
    const letGo = await holdRows([a, b]);
    const aResetsB = reset(aCookie, b, 'chosen by a for b');
    const bResetsA = reset(bCookie, a, 'chosen by b for a');
    for (let i = 0; i < 800 && (await waitingOnLocks()) < 2; i++) await sleep(25);
    expect(await waitingOnLocks(), 'both resets wait on the other admin’s row').toBe(2);
    await letGo();
    const answers = [(await aResetsB).status, (await bResetsA).status].sort();

    // A reset ends the target's sessions (ADR 0114): the session the other reset was made with is
    // ended by the first to commit, so that other reset must not also take effect. Serially, the
    // second reset's request would be answered 401 (its session ended); at once, both may not win.
    const rows = await plane.db.prisma.auditEvent.count({
      where: { action: 'operator_password_reset', target_id: { in: [a, b] } },
    });
    expect({ succeeded: answers.filter((s) => s === 200).length, rows }).toEqual({ succeeded: 1, rows: 1 });
  });
  it('DEFECT (same cause, role change): an admin demoted while its role change of a third operator waits cannot finish it', async () => {
    const a = await createTestOperator(plane, 'admin');
    const b = await createTestOperator(plane, 'admin');
    const c = await createTestOperator(plane, 'viewer');
    const aCookie = await signInCookie(plane.url, a);
    const bCookie = await signInCookie(plane.url, b);

    const letGo = await holdRows([c]);
    const bPromotesC = rawCall(plane.url, 'operators.setRole', {
      type: 'mutation',
      cookie: bCookie,
      input: { name: c, role: 'admin' },
    });
    for (let i = 0; i < 800 && (await waitingOnLocks()) < 1; i++) await sleep(25);
    expect(await waitingOnLocks()).toBe(1);
    const aDemotesB = await rawCall(plane.url, 'operators.setRole', {
      type: 'mutation',
      cookie: aCookie,
      input: { name: b, role: 'viewer' },
    });
    expect(aDemotesB.status).toBe(200);
    await letGo();
    const answer = await bPromotesC;
    const role = (await plane.db.prisma.operator.findUnique({ where: { name: c } }))!.role;
    expect({ status: answer.status, role }).toEqual({ status: 403, role: 'viewer' });
  });
});
