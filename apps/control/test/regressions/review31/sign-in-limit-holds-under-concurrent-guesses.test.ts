import { createDatabase, type Database } from '@sagaflow/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, rawCall, testDatabaseUrl, testPassword } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * ADR 0015: "at the limit it answers 429 ... and checks no password". The limit is a count of
 * refused rows read before the password is checked; here several guesses arrive together. The race
 * is driven by progress, not timing: a transaction holds an EXCLUSIVE lock on audit_events (reads
 * pass, inserts wait) until every guess has checked its password and waits to write its refusal;
 * this is what a slow insert, or simply guesses arriving within one argon2 verification, does.
 */
describe('the per-account sign-in limit under concurrent guesses', () => {
  let plane: ControlPlane;
  let side: Database;
  const limit = 3;
  const guesses = 6;
  beforeAll(async () => {
    const url = await testDatabaseUrl('r31_signin_race');
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_SIGNIN_WINDOW_SECONDS: '300',
        SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ACCOUNT: String(limit),
        SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ADDRESS: '1000',
      }),
    );
    side = await createDatabase({ kind: 'postgres', url, poolSize: 2 });
  });
  afterAll(async () => {
    await plane.stop();
    await side.close();
  });

  // A guess waits either to write to audit_events or, since the fix, for its turn to count the
  // window's refusals (an advisory lock per name, taken before it writes its own row).
  const waitingOnAudit = async () =>
    (
      await side.prisma.$queryRawUnsafe<{ n: number }[]>(
        `select count(*)::int as n from pg_locks l left join pg_class c on c.oid = l.relation
          where not l.granted and (c.relname = 'audit_events' or l.locktype = 'advisory')`,
      )
    )[0]?.n ?? 0;

  it(`${guesses} wrong passwords at once for one account get at most ${limit} password checks; the rest are 429`, async () => {
    const name = await createTestOperator(plane, 'admin');
    let release = () => undefined as void;
    const released = new Promise<void>((r) => (release = r));
    let locked = () => undefined as void;
    const lockHeld = new Promise<void>((r) => (locked = r));
    const holder = side.prisma.$transaction(
      async (tx) => {
        await tx.$executeRawUnsafe('LOCK TABLE sagaflow.audit_events IN EXCLUSIVE MODE');
        locked();
        await released;
      },
      { timeout: 60_000, maxWait: 10_000 },
    );
    await lockHeld;
    const answers = Array.from({ length: guesses }, (_, i) =>
      rawCall(plane.url, 'auth.signIn', {
        type: 'mutation',
        input: { name, password: `guess number ${i}` },
        forwardedFor: `198.51.100.${10 + i}`,
      }),
    );
    // Every guess has either been answered without a write, or checked its password and waits to write.
    let waiting = 0;
    for (let i = 0; i < 600 && waiting < guesses; i++) {
      waiting = await waitingOnAudit();
      if (waiting < guesses) await sleep(25);
    }
    release();
    await holder;
    const statuses = (await Promise.all(answers)).map((a) => a.status).sort();
    const rows = await plane.db.prisma.auditEvent.findMany({ where: { action: 'sign_in', target_id: name } });
    const refused = rows.filter((r) => r.outcome === 'refused').length;
    expect({ passwordChecks: refused, statuses }).toEqual({
      passwordChecks: limit,
      statuses: [...Array<number>(limit).fill(401), ...Array<number>(guesses - limit).fill(429)],
    });
    // The right password is refused now too: the account is at its limit.
    const right = await rawCall(plane.url, 'auth.signIn', {
      type: 'mutation',
      input: { name, password: testPassword },
    });
    expect(right.status).toBe(429);
  });

  it('one batched request of 20 sign-ins (the default batch limit) gets no more password checks than the limit', async () => {
    const name = await createTestOperator(plane, 'admin');
    const calls = 20;
    const path = Array<string>(calls).fill('auth.signIn').join(',');
    const body = Object.fromEntries(
      Array.from({ length: calls }, (_, i) => [String(i), { name, password: `batched guess ${i}` }]),
    );
    const res = await fetch(`${plane.url}/trpc/${path}?batch=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answers = (await res.json()) as { error?: { data?: { httpStatus?: number } } }[];
    const statuses = answers.map((a) => a.error?.data?.httpStatus ?? 200);
    const rows = await plane.db.prisma.auditEvent.findMany({ where: { action: 'sign_in', target_id: name } });
    expect({
      passwordChecks: rows.filter((r) => r.outcome === 'refused').length,
      refused401: statuses.filter((st) => st === 401).length,
    }).toEqual({ passwordChecks: limit, refused401: limit });
  });
});
