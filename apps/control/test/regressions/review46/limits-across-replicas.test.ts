import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '@sagaflow/engine';
import '../../provided-context.ts';
import { rawCall, testDatabaseUrl, testPassword } from '../../support/test-plane.ts';
import { cookieFrom, newOperator, sideDatabase, startReplica, type Replica } from './replicas.ts';

/**
 * Review 46: the limits and the operator-change rules hold across two control-plane processes on one
 * PostgreSQL, because they are counted and locked in the database (ADR 0015, 0105, 0107 addendum,
 * 0111, 0114): refused API tokens spread over both replicas, wrong current passwords of a stolen
 * session spread over both, and two admins demoting each other from the two replicas at once.
 */
describe('limits and operator changes across two control-plane replicas', () => {
  let a: Replica;
  let b: Replica;
  let db: Database;
  beforeAll(async () => {
    const url = await testDatabaseUrl('r46_limits');
    const env = { SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ACCOUNT: '3', SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ADDRESS: '3' };
    [a, b] = await Promise.all([startReplica(url, env), startReplica(url, env)]);
    db = await sideDatabase(url);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.close();
  });

  it('twenty bad API tokens from one address spread over A and B: exactly three are told "not known"', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        rawCall(i % 2 === 0 ? a.url : b.url, 'auth.me', {
          authorization: `Bearer sgf_${'x'.repeat(40)}${i}`,
          forwardedFor: '198.51.100.46',
        }),
      ),
    );
    const statuses = answers.map((x) => x.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(17);
  });

  it('wrong current passwords of one session, spread over A and B: three checked, the rest 429', async () => {
    const name = await newOperator(db, 'operator', 'stolen');
    const cookie = await cookieFrom(a.url, name);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        rawCall(i % 2 === 0 ? a.url : b.url, 'auth.changePassword', {
          type: 'mutation',
          cookie,
          forwardedFor: `192.0.2.${i + 1}`,
          input: { currentPassword: `not the password ${i}`, newPassword: 'taken over password 46' },
        }),
      ),
    );
    const statuses = answers.map((x) => x.status).sort();
    expect(statuses).toEqual([...Array<number>(3).fill(403), ...Array<number>(7).fill(429)]);
    // The sign-in page is closed to the account too, on either replica.
    for (const url of [a.url, b.url]) {
      const right = await rawCall(url, 'auth.signIn', {
        type: 'mutation',
        forwardedFor: '192.0.2.200',
        input: { name, password: testPassword },
      });
      expect(right.status).toBe(429);
    }
  });

  it('two admins demoting each other from A and B at once leave an enabled admin', async () => {
    for (let round = 0; round < 3; round++) {
      await db.prisma.operator.updateMany({ where: { role: 'admin' }, data: { role: 'viewer' } });
      const [x, y] = [await newOperator(db, 'admin', 'adm'), await newOperator(db, 'admin', 'adm')];
      const [cx, cy] = [await cookieFrom(a.url, x), await cookieFrom(b.url, y)];
      const [rx, ry] = await Promise.all([
        rawCall(a.url, 'operators.setRole', { type: 'mutation', cookie: cx, input: { name: y, role: 'viewer' } }),
        rawCall(b.url, 'operators.setRole', { type: 'mutation', cookie: cy, input: { name: x, role: 'viewer' } }),
      ]);
      expect([rx.status, ry.status].sort(), JSON.stringify([rx.body, ry.body])).toEqual([200, 403]);
      expect(await db.prisma.operator.count({ where: { role: 'admin', disabled_at: null } })).toBe(1);
    }
  });
});
