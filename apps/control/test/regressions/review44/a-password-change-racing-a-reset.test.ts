import { createDatabase, type Database } from '@sagaflow/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, rawCall, signInCookie, testDatabaseUrl, testPassword } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * ADR 0111: a change "stores the new argon2id hash, only if the hash is still the one checked";
 * ADR 0114: an admin's reset sets the hash. An operator changing its own password with the OLD current
 * password, checked just before an admin's reset commits, must not overwrite the reset. Forced by
 * progress: a side transaction holds the operator's row (FOR UPDATE); the reset is seen waiting on it,
 * then the change (its current password already checked) is seen waiting behind it; the row is let go,
 * and the reset, first in the row's queue, commits first.
 */
describe('a password change with the old current password racing an admin reset', () => {
  let plane: ControlPlane;
  let side: Database;
  beforeAll(async () => {
    const url = await testDatabaseUrl('r44_change_vs_reset');
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

  it('the change is refused and the reset’s password is the one that signs in', async () => {
    const admin = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    const target = await createTestOperator(plane, 'operator');
    const own = await signInCookie(plane.url, target);

    let release = () => undefined as void;
    const released = new Promise<void>((r) => (release = r));
    let locked = () => undefined as void;
    const lockHeld = new Promise<void>((r) => (locked = r));
    const holder = side.prisma.$transaction(
      async (tx) => {
        await tx.$queryRawUnsafe(`select 1 from sagaflow.operators where name = $1 for update`, target);
        locked();
        await released;
      },
      { timeout: 60_000, maxWait: 10_000 },
    );
    await lockHeld;

    const reset = rawCall(plane.url, 'operators.resetPassword', {
      type: 'mutation',
      cookie: admin,
      input: { name: target, newPassword: 'set by the admin reset' },
    });
    for (let i = 0; i < 800 && (await waitingOnLocks()) < 1; i++) await sleep(25);
    expect(await waitingOnLocks()).toBe(1);
    const change = rawCall(plane.url, 'auth.changePassword', {
      type: 'mutation',
      cookie: own,
      input: { currentPassword: testPassword, newPassword: 'set by the old password' },
    });
    for (let i = 0; i < 800 && (await waitingOnLocks()) < 2; i++) await sleep(25);
    expect(await waitingOnLocks()).toBe(2);
    release();
    await holder;

    expect((await reset).status).toBe(200);
    expect((await change).status).toBe(409);
    const signIn = async (password: string) =>
      (await rawCall(plane.url, 'auth.signIn', { type: 'mutation', input: { name: target, password } })).status;
    expect(await signIn('set by the old password')).toBe(401);
    expect(await signIn('set by the admin reset')).toBe(200);
  });
});
