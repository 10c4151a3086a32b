import { createDatabase, type Database } from '@sagaflow/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import {
  createTestOperator,
  rawCall,
  signInCookie,
  testDatabaseUrl,
  testPassword,
  type RawAnswer,
} from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const gateKey = 44_001;

/**
 * ADR 0114: an admin's reset sets the new hash and ends "every session of theirs", so whoever held
 * the old password signs in again with the new one (ADR 0111: a change of one's own ends the other
 * sessions). A sign-in checks the password it was given against the hash it read, outside any
 * transaction, then opens the session in a transaction of its own that does not look at the hash
 * again. A reset (or change) that commits between the two leaves a session opened with the OLD
 * password alive after it.
 *
 * The interleaving is forced by progress: a test-only trigger on `sagaflow.sessions` makes a session's
 * insert wait for an advisory lock the test holds. The target's sign-in (old password) is seen waiting
 * on it in pg_locks, i.e. its password has been checked; the password is reset (or changed); the gate
 * opens.
 */
describe('a sign-in with the old password racing a new password', () => {
  let plane: ControlPlane;
  let side: Database;
  beforeAll(async () => {
    const url = await testDatabaseUrl('r44_signin_reset');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    side = await createDatabase({ kind: 'postgres', url, poolSize: 3 });
    await side.prisma.$executeRawUnsafe(
      `create or replace function sagaflow.review44_gate() returns trigger language plpgsql as $$
         begin perform pg_advisory_xact_lock_shared(${gateKey}); return new; end $$`,
    );
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

  /**
   * Signs `target` in with the test password, held at its session insert while `meanwhile` (which
   * sets another password) runs and commits; what the sign-in opened, and what works afterwards.
   */
  async function signInAcross(target: string, meanwhile: () => Promise<RawAnswer>) {
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
    let change: RawAnswer;
    let oldSignIn: Promise<RawAnswer> | undefined;
    try {
      oldSignIn = rawCall(plane.url, 'auth.signIn', {
        type: 'mutation',
        input: { name: target, password: testPassword },
      });
      for (let i = 0; i < 800 && (await waitingAtGate()) < 1; i++) await sleep(25);
      expect(await waitingAtGate(), 'the sign-in checked its password and reached its session insert').toBe(1);
      change = await meanwhile();
    } finally {
      release();
      await holder;
      await side.prisma.$executeRawUnsafe(`drop trigger review44_gate on sagaflow.sessions`);
    }
    const signedIn = await oldSignIn;
    expect(change.status, JSON.stringify(change.body)).toBe(200);
    const setCookie = signedIn.headers['set-cookie'];
    const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] ?? '';
    const me = cookie === '' ? 0 : (await rawCall(plane.url, 'auth.me', { cookie })).status;
    return { signIn: signedIn.status, oldPasswordsSession: me === 200 ? 'signed in' : 'not signed in' };
  }

  it('DEFECT: an admin reset: the session the old password opens does not survive it', async () => {
    const adminCookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    const target = await createTestOperator(plane, 'operator');
    const outcome = await signInAcross(target, () =>
      rawCall(plane.url, 'operators.resetPassword', {
        type: 'mutation',
        cookie: adminCookie,
        input: { name: target, newPassword: 'the new password after reset' },
      }),
    );
    // Either the sign-in is refused, or the session it opened is gone: nothing the old password opened works.
    expect(outcome).toEqual({ signIn: outcome.signIn, oldPasswordsSession: 'not signed in' });
    expect(await plane.db.prisma.session.count({ where: { operator: { name: target } } })).toBe(0);
  });

  it('DEFECT (same cause): the operator’s own change: the session the old password opens elsewhere does not survive it', async () => {
    const target = await createTestOperator(plane, 'operator');
    const own = await signInCookie(plane.url, target);
    const outcome = await signInAcross(target, () =>
      rawCall(plane.url, 'auth.changePassword', {
        type: 'mutation',
        cookie: own,
        input: { currentPassword: testPassword, newPassword: 'my own new password' },
      }),
    );
    expect(outcome).toEqual({ signIn: outcome.signIn, oldPasswordsSession: 'not signed in' });
  });
});
