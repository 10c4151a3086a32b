import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { apiClient, createTestOperator, rejection, signInCookie, testDatabaseUrl } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

describe('admins create operators, change roles and disable them; every change is audited', () => {
  let plane: ControlPlane;
  let admin: ReturnType<typeof apiClient>;
  let adminName: string;
  beforeAll(async () => {
    const url = await testDatabaseUrl('operators');
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_ADMIN_PASSWORD: 'first-admin-pw',
      }),
    );
    adminName = await createTestOperator(plane, 'admin');
    admin = apiClient(plane.url, await signInCookie(plane.url, adminName));
  });
  afterAll(async () => {
    await plane.stop();
  });
  const audit = (targetId: string) =>
    plane.db.prisma.auditEvent.findMany({
      where: { target_id: targetId, action: { startsWith: 'operator_' } },
      orderBy: { at: 'asc' },
    });

  it('SAGAFLOW_ADMIN_PASSWORD is the first admin password', async () => {
    expect(await signInCookie(plane.url, 'admin', 'first-admin-pw')).toMatch(/^sagaflow_session=/);
  });

  it('a created operator signs in with its role; the creation is audited with its creator', async () => {
    await admin.operators.create.mutate({
      name: 'Dana',
      displayName: 'Dana on call',
      role: 'viewer',
      password: 'a long enough password',
    });
    const dana = apiClient(plane.url, await signInCookie(plane.url, 'dana', 'a long enough password'));
    expect((await dana.auth.me.query()).operator).toMatchObject({ name: 'dana', role: 'viewer' });
    expect(await rejection(dana.runs.start.mutate({ flowName: 'demo.order', input: {} }))).toMatchObject({
      status: 403,
    });
    expect((await audit('dana')).map((e) => [e.action, e.actor])).toEqual([['operator_created', adminName]]);
    expect(
      await rejection(
        admin.operators.create.mutate({
          name: 'dana',
          displayName: 'x',
          role: 'viewer',
          password: 'another long one!',
        }),
      ),
    ).toMatchObject({ status: 409 });
    expect(
      await rejection(
        admin.operators.create.mutate({ name: 'short', displayName: 'x', role: 'viewer', password: 'x' }),
      ),
    ).toMatchObject({ status: 400, field: 'input.password' });
  });

  it("a role change applies to the operator's next request, in its open session, and is audited from → to", async () => {
    await admin.operators.create.mutate({
      name: 'eli',
      displayName: 'Eli',
      role: 'viewer',
      password: 'eli password 123',
    });
    const eli = apiClient(plane.url, await signInCookie(plane.url, 'eli', 'eli password 123'));
    expect(
      await rejection(eli.runs.start.mutate({ flowName: 'demo.order', input: { orderId: 'e', amount: 1 } })),
    ).toMatchObject({ status: 403 });
    await admin.operators.setRole.mutate({ name: 'eli', role: 'operator' });
    const { runId } = await eli.runs.start.mutate({ flowName: 'demo.order', input: { orderId: 'e', amount: 1 } });
    expect(runId).toBeTruthy();
    const changed = (await audit('eli')).find((e) => e.action === 'operator_role_changed');
    expect(changed?.details).toEqual({ from: 'viewer', to: 'operator' });
    expect(changed?.actor).toBe(adminName);
  });

  it('a disabled operator is signed out at once and cannot sign in; enabled again, it can', async () => {
    await admin.operators.create.mutate({
      name: 'fay',
      displayName: 'Fay',
      role: 'operator',
      password: 'fay password 123',
    });
    const fay = apiClient(plane.url, await signInCookie(plane.url, 'fay', 'fay password 123'));
    expect((await fay.auth.me.query()).operator.name).toBe('fay');
    await admin.operators.setDisabled.mutate({ name: 'fay', disabled: true });
    expect(await rejection(fay.auth.me.query())).toMatchObject({ status: 401 });
    await expect(signInCookie(plane.url, 'fay', 'fay password 123')).rejects.toThrow(/401/);
    await admin.operators.setDisabled.mutate({ name: 'fay', disabled: false });
    expect(await signInCookie(plane.url, 'fay', 'fay password 123')).toMatch(/^sagaflow_session=/);
    expect((await audit('fay')).map((e) => e.action)).toEqual([
      'operator_created',
      'operator_disabled',
      'operator_enabled',
    ]);
    const list = await admin.operators.list.query();
    expect(list.find((o) => o.name === 'fay')).toMatchObject({ role: 'operator', disabled: false });
  });

  it('an admin cannot demote or disable itself (409), and an unknown name is a 404; nothing changes', async () => {
    expect(await rejection(admin.operators.setRole.mutate({ name: adminName, role: 'viewer' }))).toMatchObject({
      status: 409,
    });
    expect(await rejection(admin.operators.setDisabled.mutate({ name: adminName, disabled: true }))).toMatchObject({
      status: 409,
    });
    expect(await rejection(admin.operators.setRole.mutate({ name: 'ghost', role: 'viewer' }))).toMatchObject({
      status: 404,
    });
    expect((await admin.auth.me.query()).operator.role).toBe('admin');
    expect(await audit(adminName)).toEqual([expect.objectContaining({ action: 'operator_created' })]);
  });
});
