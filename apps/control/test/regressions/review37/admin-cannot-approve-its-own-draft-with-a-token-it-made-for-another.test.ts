import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import {
  apiClient,
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
 * ADR 0020: "The drafter cannot decide their own draft ... a second operator must". ADR 0021 lets an
 * admin create a token for any operator, and the secret is returned to the admin, not to that
 * operator. So one admin can draft a gated terminate, mint a token "for" a colleague who never saw
 * it, and approve the draft with it: the run is terminated by one person while the audit trail
 * names two. The rule must hold against the person holding the credential, not the name on it.
 */
describe('review 37: the two-person rule against a token an admin made for someone else', () => {
  let plane: ControlPlane;
  let admin = '';
  let colleague = '';
  let adminCookie = '';
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('r37_minted'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    admin = await createTestOperator(plane, 'admin');
    colleague = await createTestOperator(plane, 'operator');
    adminCookie = await signInCookie(plane.url, admin);
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('an admin who drafted a terminate cannot approve it with a token it created for another operator', async () => {
    const runId = await startWaitingRun(plane, adminCookie);
    const draft = await rawCall(plane.url, 'repairs.applyOne', {
      type: 'mutation',
      cookie: adminCookie,
      input: {
        kind: 'run.terminate',
        target: { runId },
        expected: { runStatus: 'Waiting' },
        reason: 'one person, two names',
        idempotencyKey: randomUUID(),
      },
    });
    expect(draft.status, JSON.stringify(draft.body)).toBe(200);
    const approvalId = (draft.body as Data<{ approvalId: string }>).result.data.approvalId;
    expect(approvalId).toBeTruthy();

    // The admin makes a token in the colleague's name; the secret comes back to the admin.
    const { token } = await apiClient(plane.url, adminCookie).tokens.create.mutate({
      name: 'not-really-mine',
      operator: colleague,
    });
    const approve = await rawCall(plane.url, 'approvals.approve', {
      type: 'mutation',
      authorization: `Bearer ${token}`,
      input: { id: approvalId },
    });
    expect(approve.status, JSON.stringify(approve.body)).toBe(403);
    expect((await plane.engine.getRun(runId))?.run.status).toBe('Waiting');
  });
});
