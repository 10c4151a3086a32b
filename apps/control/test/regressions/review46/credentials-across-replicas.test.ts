import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '@sagaflow/engine';
import '../../provided-context.ts';
import { rawCall, testDatabaseUrl, testPassword } from '../../support/test-plane.ts';
import { cookieFrom, dataOf, newOperator, sideDatabase, startReplica, type Replica } from './replicas.ts';

/**
 * Review 46: two control-plane processes (A and B) on one PostgreSQL, as behind a load balancer.
 * What one replica does to a credential takes effect on the other at its very next request: no
 * replica keeps sessions, roles or tokens in memory (ADR 0015: server-side sessions; ADR 0105/0114).
 */
describe('credentials across two control-plane replicas', () => {
  let a: Replica;
  let b: Replica;
  let db: Database;
  beforeAll(async () => {
    const url = await testDatabaseUrl('r46_credentials');
    [a, b] = await Promise.all([startReplica(url), startReplica(url)]);
    db = await sideDatabase(url);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.close();
  });

  const me = (url: string, cookie: string) => rawCall(url, 'auth.me', { cookie });
  const bearer = (token: string) => `Bearer ${token}`;

  it('a session opened on A works on B, and signing out on A ends it on B at once', async () => {
    const name = await newOperator(db, 'operator');
    const cookie = await cookieFrom(a.url, name);
    expect((await me(b.url, cookie)).status).toBe(200);
    const out = await rawCall(a.url, 'auth.signOut', { type: 'mutation', cookie });
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    expect((await me(b.url, cookie)).status).toBe(401);
  });

  it('an admin reset on A ends the session on B at its next request; only the new password signs in on B', async () => {
    const admin = await cookieFrom(a.url, await newOperator(db, 'admin'));
    const name = await newOperator(db, 'operator');
    const onB = await cookieFrom(b.url, name);
    const reset = await rawCall(a.url, 'operators.resetPassword', {
      type: 'mutation',
      cookie: admin,
      input: { name, newPassword: 'a brand new password 46' },
    });
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    expect((await me(b.url, onB)).status).toBe(401);
    const old = await rawCall(b.url, 'auth.signIn', { type: 'mutation', input: { name, password: testPassword } });
    expect(old.status).toBe(401);
    await cookieFrom(b.url, name, 'a brand new password 46');
  });

  it('an own password change on B ends the session on A, keeps the one on B', async () => {
    const name = await newOperator(db, 'operator');
    const onA = await cookieFrom(a.url, name);
    const onB = await cookieFrom(b.url, name);
    const changed = await rawCall(b.url, 'auth.changePassword', {
      type: 'mutation',
      cookie: onB,
      input: { currentPassword: testPassword, newPassword: 'my own new password 46' },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect((await me(a.url, onA)).status).toBe(401);
    expect((await me(b.url, onB)).status).toBe(200);
    expect((await me(a.url, onB)).status).toBe(200);
  });

  it('a role change on B is the role A checks at the next request (session and token)', async () => {
    const admin = await cookieFrom(b.url, await newOperator(db, 'admin'));
    const name = await newOperator(db, 'operator');
    const onA = await cookieFrom(a.url, name);
    const made = await rawCall(a.url, 'tokens.create', { type: 'mutation', cookie: onA, input: { name: 'r46' } });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const { token } = dataOf<{ token: string }>(made);
    const preview = (auth: { cookie?: string; authorization?: string }) =>
      rawCall(a.url, 'repairs.preview', {
        ...auth,
        input: {
          kind: 'run.cancel',
          target: { runId: '00000000-0000-4000-8000-000000000046' },
          expected: { runStatus: 'Waiting' },
          reason: 'r46',
          idempotencyKey: 'r46-role',
        },
      });
    // As an operator the procedure is allowed (whatever the engine says about the unknown run, not 403).
    expect((await preview({ cookie: onA })).status).not.toBe(403);
    const demoted = await rawCall(b.url, 'operators.setRole', {
      type: 'mutation',
      cookie: admin,
      input: { name, role: 'viewer' },
    });
    expect(demoted.status, JSON.stringify(demoted.body)).toBe(200);
    expect((await preview({ cookie: onA })).status).toBe(403);
    expect((await preview({ authorization: bearer(token) })).status).toBe(403);
    expect(dataOf<{ operator: { role: string } }>(await me(a.url, onA)).operator.role).toBe('viewer');
  });

  it('disabling on A refuses the operator’s session and API token on B at once', async () => {
    const admin = await cookieFrom(a.url, await newOperator(db, 'admin'));
    const name = await newOperator(db, 'operator');
    const onB = await cookieFrom(b.url, name);
    const made = await rawCall(b.url, 'tokens.create', { type: 'mutation', cookie: onB, input: { name: 'r46' } });
    const { token } = dataOf<{ token: string }>(made);
    expect((await rawCall(b.url, 'auth.me', { authorization: bearer(token) })).status).toBe(200);
    const disabled = await rawCall(a.url, 'operators.setDisabled', {
      type: 'mutation',
      cookie: admin,
      input: { name, disabled: true },
    });
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    expect((await me(b.url, onB)).status).toBe(401);
    expect((await rawCall(b.url, 'auth.me', { authorization: bearer(token) })).status).toBe(401);
    const signIn = await rawCall(b.url, 'auth.signIn', { type: 'mutation', input: { name, password: testPassword } });
    expect(signIn.status).toBe(401);
  });

  it('a token revoked on A is refused on B at once', async () => {
    const name = await newOperator(db, 'operator');
    const onA = await cookieFrom(a.url, name);
    const made = await rawCall(a.url, 'tokens.create', { type: 'mutation', cookie: onA, input: { name: 'r46' } });
    const created = dataOf<{ token: string; id: string }>(made);
    expect((await rawCall(b.url, 'auth.me', { authorization: bearer(created.token) })).status).toBe(200);
    const revoked = await rawCall(a.url, 'tokens.revoke', { type: 'mutation', cookie: onA, input: { id: created.id } });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect((await rawCall(b.url, 'auth.me', { authorization: bearer(created.token) })).status).toBe(401);
  });
});
