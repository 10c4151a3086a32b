import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { createTestOperator, rawCall, signInCookie, testDatabaseUrl } from './support/test-plane.ts';
import { appRouter } from '../src/api/app-router.ts';
import type { ApiMeta } from '../src/api/trpc.ts';
import { roles, type Role } from '../src/auth/roles.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/**
 * The role each procedure needs. A new procedure fails this file until it is added here, and a
 * changed role shows in review: roles are a decision, not a side effect of which builder was used.
 */
const expectedRoles: Record<string, ApiMeta['role']> = {
  'auth.signIn': 'public',
  'auth.signOut': 'viewer',
  'auth.me': 'viewer',
  'auth.changePassword': 'viewer',
  'runs.list': 'viewer',
  'runs.page': 'viewer',
  'runs.get': 'viewer',
  'runs.steps': 'viewer',
  'runs.compensations': 'viewer',
  'runs.events': 'viewer',
  'runs.changes': 'viewer',
  'runs.start': 'operator',
  'runs.flows': 'viewer',
  'runs.actions': 'viewer',
  'instances.list': 'viewer',
  'instances.page': 'viewer',
  'instances.get': 'viewer',
  'instances.transitions': 'viewer',
  'outbox.lag': 'viewer',
  'outbox.get': 'viewer',
  'outbox.dead': 'viewer',
  'overview.get': 'viewer',
  'operators.list': 'admin',
  'operators.create': 'admin',
  'operators.setRole': 'admin',
  'operators.setDisabled': 'admin',
  'operators.resetPassword': 'admin',
  'repairs.catalogue': 'viewer',
  'repairs.preview': 'operator',
  'repairs.applyOne': 'operator',
  'repairs.previewBulk': 'operator',
  'repairs.applyBulk': 'operator',
  'repairs.keyUse': 'operator',
  'series.get': 'viewer',
  'anomalies.page': 'viewer',
  'audit.page': 'viewer',
  'definitions.list': 'viewer',
  'tokens.create': 'viewer',
  'tokens.list': 'viewer',
  'tokens.revoke': 'viewer',
  'approvals.list': 'viewer',
  'approvals.get': 'viewer',
  'approvals.approve': 'operator',
  'approvals.reject': 'operator',
  'approvalPolicy.get': 'viewer',
  'approvalPolicy.set': 'admin',
};

type ProcedureDef = { _def: { type: 'query' | 'mutation' | 'subscription'; meta?: ApiMeta } };
const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, ProcedureDef>).map(
  ([path, p]) => ({
    path,
    type: p._def.type,
    role: p._def.meta?.role,
  }),
);

describe('every tRPC procedure declares its role, and the server enforces it over HTTP', () => {
  let plane: ControlPlane;
  const cookies = {} as Record<Role, string>;
  beforeAll(async () => {
    const url = await testDatabaseUrl('roles');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    for (const role of roles) cookies[role] = await signInCookie(plane.url, await createTestOperator(plane, role));
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('every procedure declares the role listed for it here, and every listed procedure exists', () => {
    const declared = Object.fromEntries(procedures.map((p) => [p.path, p.role ?? 'none (no meta)']));
    expect(declared).toEqual(expectedRoles);
  });

  it('there are no subscriptions (the checks below call queries and mutations)', () => {
    expect(procedures.filter((p) => p.type === 'subscription').map((p) => p.path)).toEqual([]);
  });

  const guarded = procedures.flatMap((p) =>
    p.role !== 'public' && p.type !== 'subscription' ? [{ ...p, type: p.type }] : [],
  );

  it.each(guarded)('$path ($role) refuses a request without a session: 401, nothing run', async ({ path, type }) => {
    const answer = await rawCall(plane.url, path, { type, input: {} });
    expect(answer.status).toBe(401);
    expect(JSON.stringify(answer.body)).toContain('sign in');
  });

  it.each(guarded)('$path ($role) refuses an unknown session cookie: 401', async ({ path, type }) => {
    const answer = await rawCall(plane.url, path, { type, input: {}, cookie: 'sagaflow_session=forged' });
    expect(answer.status).toBe(401);
  });

  it.each(guarded.map((p, i) => ({ ...p, i })))(
    '$path ($role) refuses an unknown API token: 401 saying how to get one',
    async ({ path, type, i }) => {
      // Each from its own address: refused tokens are rate-limited per address.
      const answer = await rawCall(plane.url, path, {
        type,
        input: {},
        authorization: `Bearer sgf_${'x'.repeat(43)}`,
        forwardedFor: `198.51.100.${i + 1}`,
      });
      expect(answer.status).toBe(401);
      expect(JSON.stringify(answer.body)).toContain('token create');
    },
  );

  it.each(guarded)('$path ($role) refuses every lower role with 403 and lets its own role past', async (p) => {
    const required = roles.indexOf(p.role as Role);
    for (const [i, role] of roles.entries()) {
      // Sign-out ends the session it is called with: only the lower roles' (refused) calls run here.
      if (i >= required && p.path === 'auth.signOut') continue;
      const answer = await rawCall(plane.url, p.path, { type: p.type, input: {}, cookie: cookies[role] });
      if (i < required) {
        expect(answer.status, `${role} calling ${p.path}`).toBe(403);
        expect(JSON.stringify(answer.body)).toContain(`needs the ${p.role} role`);
      } else {
        // Past the role check: the (empty) input may be refused, never the caller.
        expect([401, 403], `${role} calling ${p.path}: ${JSON.stringify(answer.body)}`).not.toContain(answer.status);
      }
    }
  });

  it('a refused runs.start starts nothing', async () => {
    const before = await plane.db.prisma.flowRun.count();
    const input = { flowName: 'demo.order', input: { orderId: 'x', amount: 1 } };
    expect((await rawCall(plane.url, 'runs.start', { type: 'mutation', input })).status).toBe(401);
    expect((await rawCall(plane.url, 'runs.start', { type: 'mutation', input, cookie: cookies.viewer })).status).toBe(
      403,
    );
    expect(await plane.db.prisma.flowRun.count()).toBe(before);
    expect((await rawCall(plane.url, 'runs.start', { type: 'mutation', input, cookie: cookies.operator })).status).toBe(
      200,
    );
    expect(await plane.db.prisma.flowRun.count()).toBe(before + 1);
  });
});
