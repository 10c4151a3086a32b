import { createDatabase, type Database } from '@sagaflow/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, rawCall, signInCookie, testDatabaseUrl, testPassword } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const gateKey = 44_001;

/**
 * ADR 0114: an admin's reset sets the new hash and ends "every session of theirs", so whoever held
 * the old password signs in again with the new one. A sign-in checks the password it was given
 * against the hash it read, outside any transaction, then opens the session in a transaction of its
 * own that does not look at the hash again. A reset that commits between the two leaves a session
 * opened with the OLD password alive after the reset.
 *
 * The interleaving is forced by progress: a test-only trigger on `sagaflow.sessions` makes a session's
 * insert wait for an advisory lock the test holds. The target's sign-in (old password) is seen waiting
 * on it in pg_locks, i.e. its password has been checked; the admin resets the password; the gate opens.
 */
describe('a sign-in with the old password racing an admin reset', () => {
  let plane: ControlPlane;
  let side: Database;
  beforeAll(async () => {
    const url = await testDatabaseUrl('r44_signin_reset');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    side = await createDatabase({ kind: 'postgres', url, poolSize: 3 });
  });
  afterAll(async () => {
    await side?.prisma.$executeRawUnsafe(`drop trigger if exists review44_gate on sagaflow.sessions`).catch(() => 0);
    await plane?.stop();
    await side?.close();
  });

  const waitingAtGate = async () =>
    (
      await side.prisma.$queryRawUnsafe<{ n: number }[]>(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = ${gateKey} and not granted`,
      )
    )[0]?.n ?? 0;

  it('DEFECT: the session it opens does not survive the reset, and only the new password signs in', async () => {
    const admin = await createTestOperator(plane, 'admin');
    const adminCookie = await signInCookie(plane.url, admin);
    const target = await createTestOperator(plane, 'operator');

    await side.prisma.$executeRawUnsafe(
      `create or replace function sagaflow.review44_gate() returns trigger language plpgsql as $$
         begin perform pg_advisory_xact_lock_shared(${gateKey}); return new; end $$`,
    );
    await side.prisma.$executeRawUnsafe(
      `create trigger review44_gate before insert on sagaflow.sessions for each row execute function sagaflow.review44_gate()`,
    );
    let release = () => undefined as void;
    const released = new Promise<void>((r) => (release = r));
    let locked = () => undefined as void;
    const lockHeld = new Promise<void>((r) => (locked = r));
    const holder = side.prisma.$transaction(
      async (tx) => {
        await tx.$queryRawUnsafe(`select pg_advisory_xact_lock(${gateKey})::text`);
        locked();
        await released;
      },
      { timeout: 60_000, maxWait: 10_000 },
    );
    await lockHeld;

    const oldSignIn = rawCall(plane.url, 'auth.signIn', {
      type: 'mutation',
      input: { name: target, password: testPassword },
    });
    for (let i = 0; i < 800 && (await waitingAtGate()) < 1; i++) await sleep(25);
    expect(await waitingAtGate(), 'the sign-in reached its session insert').toBe(1);

    const reset = await rawCall(plane.url, 'operators.resetPassword', {
      type: 'mutation',
      cookie: adminCookie,
      input: { name: target, newPassword: 'the new password after reset' },
    });
    expect(reset.status).toBe(200);
    release();
    await holder;
    await side.prisma.$executeRawUnsafe(`drop trigger review44_gate on sagaflow.sessions`);
    const signedIn = await oldSignIn;

    const setCookie = signedIn.headers['set-cookie'];
    const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] ?? '';
    const me = cookie === '' ? null : (await rawCall(plane.url, 'auth.me', { cookie })).status;
    const liveSessions = await plane.db.prisma.session.count({
      where: { operator: { name: target } },
    });
    // Either the sign-in is refused, or the session it opened is gone: nothing the old password opened works.
    expect({ signIn: signedIn.status, me: me === 200 ? 'signed in' : 'not signed in', liveSessions }).toEqual({
      signIn: signedIn.status,
      me: 'not signed in',
      liveSessions: 0,
    });
    expect(
      (await rawCall(plane.url, 'auth.signIn', { type: 'mutation', input: { name: target, password: testPassword } }))
        .status,
    ).toBe(401);
  });
});
