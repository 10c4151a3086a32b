import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import {
  createTestOperator,
  rawCall,
  signInCookie,
  startWaitingRun,
  testDatabaseUrl,
} from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

type Data<T = Record<string, unknown>> = { result: { data: T } };

/**
 * The audit trail is audit_events (sign-ins, operators, tokens, policy) and repair_commands (repairs),
 * merged by audit.page. Every mutation an operator makes should leave exactly one row there that
 * names that operator; a refused mutation none.
 */
describe('every mutation leaves exactly one audit row naming its actor; a refused one none', () => {
  let plane: ControlPlane;
  const names = { viewer: '', ana: '', ben: '', admin: '' };
  const cookies = { viewer: '', ana: '', ben: '', admin: '' };
  beforeAll(async () => {
    const url = await testDatabaseUrl('r31_audit_rows');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    for (const [who, role] of [
      ['viewer', 'viewer'],
      ['ana', 'operator'],
      ['ben', 'operator'],
      ['admin', 'admin'],
    ] as const) {
      names[who] = await createTestOperator(plane, role);
      cookies[who] = await signInCookie(plane.url, names[who]);
    }
  });
  afterAll(async () => {
    await plane.stop();
  });

  /** Every row of the audit trail, as (table, actor-ish, action). */
  async function trail() {
    const events = await plane.db.prisma.auditEvent.findMany({ select: { id: true, actor: true, action: true } });
    const repairs = await plane.db.prisma.repairCommand.findMany({
      select: { id: true, actor: true, approved_by: true, command: true, status: true },
    });
    return [
      ...events.map((e) => ({ id: `a:${e.id}`, names: [e.actor], what: e.action })),
      ...repairs.map((r) => ({
        id: `r:${r.id}`,
        names: [r.actor, r.approved_by].filter((n): n is string => n !== null),
        what: `${r.command} ${r.status}`,
      })),
    ];
  }
  /** The rows `act` added to the trail. */
  async function added(act: () => Promise<unknown>) {
    const before = new Set((await trail()).map((r) => r.id));
    await act();
    return (await trail()).filter((r) => !before.has(r.id));
  }
  const call = (path: string, cookie: string, input: unknown, type: 'query' | 'mutation' = 'mutation') =>
    rawCall(plane.url, path, { type, input, cookie });
  const ok = async (path: string, cookie: string, input: unknown) => {
    const a = await call(path, cookie, input);
    expect(a.status, `${path}: ${JSON.stringify(a.body)}`).toBe(200);
    return (a.body as Data).result.data;
  };

  const waitingRun = () => startWaitingRun(plane, cookies.ana);
  const terminate = (runId: string) => ({
    kind: 'run.terminate',
    target: { runId },
    expected: { runStatus: 'Waiting' },
    reason: 'charged twice',
    idempotencyKey: randomUUID(),
  });

  it('tokens, operators, the policy and sign-out: one row each naming the actor; refusals and a second revoke none', async () => {
    let tokenId = '';
    const made = await added(async () => {
      tokenId = ((await ok('tokens.create', cookies.ana, { name: 'ci' })) as { id: string }).id;
    });
    expect(made.map((r) => [r.names, r.what])).toEqual([[[names.ana], 'token_created']]);
    expect((await added(() => ok('tokens.revoke', cookies.ana, { id: tokenId }))).map((r) => r.what)).toEqual([
      'token_revoked',
    ]);
    expect(await added(() => ok('tokens.revoke', cookies.ana, { id: tokenId }))).toEqual([]);

    const newName = `op-${randomUUID().slice(0, 8)}`;
    const created = await added(() =>
      ok('operators.create', cookies.admin, {
        name: newName,
        displayName: 'New',
        role: 'viewer',
        password: 'a long enough password',
      }),
    );
    expect(created.map((r) => [r.names, r.what])).toEqual([[[names.admin], 'operator_created']]);
    const role = await added(() => ok('operators.setRole', cookies.admin, { name: newName, role: 'operator' }));
    expect(role.map((r) => [r.names, r.what])).toEqual([[[names.admin], 'operator_role_changed']]);
    const policy = await added(() =>
      ok('approvalPolicy.set', cookies.admin, { gatedCommands: ['run.terminate'], bulkThreshold: 10 }),
    );
    expect(policy.map((r) => [r.names, r.what])).toEqual([[[names.admin], 'approval_policy_changed']]);

    // Refused: wrong role, another operator's token, an admin changing itself.
    const refused = await added(async () => {
      expect((await call('operators.setRole', cookies.ana, { name: newName, role: 'admin' })).status).toBe(403);
      expect((await call('approvalPolicy.set', cookies.ana, { gatedCommands: [], bulkThreshold: null })).status).toBe(
        403,
      );
      const adminsToken = (await ok('tokens.create', cookies.admin, { name: 'admin-ci' })) as { id: string };
      expect((await call('tokens.revoke', cookies.ana, { id: adminsToken.id })).status).toBe(404);
      expect((await call('operators.setDisabled', cookies.admin, { name: names.admin, disabled: true })).status).toBe(
        409,
      );
    });
    // Only the admin's own token creation made inside the block is there.
    expect(refused.map((r) => [r.names, r.what])).toEqual([[[names.admin], 'token_created']]);

    const signOutCookie = await signInCookie(plane.url, names.viewer);
    const out = await added(() => ok('auth.signOut', signOutCookie, {}));
    expect(out.map((r) => [r.names, r.what])).toEqual([[[names.viewer], 'sign_out']]);
  });

  it('an approval: one row naming drafter and approver', async () => {
    const runId = await waitingRun();
    const drafted = (await ok('repairs.applyOne', cookies.ana, terminate(runId))) as { approvalId: string };
    const approved = await added(() => ok('approvals.approve', cookies.ben, { id: drafted.approvalId }));
    expect(approved.map((r) => [r.names, r.what])).toEqual([[[names.ana, names.ben], 'run.terminate applied']]);
  });

  it('a rejection leaves a row in the audit trail naming who rejected it', async () => {
    const runId = await waitingRun();
    const drafted = (await ok('repairs.applyOne', cookies.ana, terminate(runId))) as { approvalId: string };
    const rejected = await added(() =>
      ok('approvals.reject', cookies.ben, { id: drafted.approvalId, reason: 'not this one' }),
    );
    expect(rejected.map((r) => r.names.includes(names.ben))).toEqual([true]);
  });

  it('drafting a gated repair leaves a row in the audit trail naming its drafter', async () => {
    const runId = await waitingRun();
    const drafted = await added(() => ok('repairs.applyOne', cookies.ana, terminate(runId)));
    expect(drafted.map((r) => r.names.includes(names.ana))).toEqual([true]);
  });

  it('starting a run leaves a row in the audit trail naming who started it', async () => {
    const started = await added(() =>
      ok('runs.start', cookies.ben, { flowName: 'demo.reservation', input: { orderId: randomUUID() } }),
    );
    expect(started.map((r) => r.names.includes(names.ben))).toEqual([true]);
  });
});
