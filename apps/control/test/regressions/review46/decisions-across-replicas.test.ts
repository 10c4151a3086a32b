import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '@sagaflow/engine';
import '../../provided-context.ts';
import { rawCall, testDatabaseUrl } from '../../support/test-plane.ts';
import {
  cookieFrom,
  dataOf,
  newOperator,
  runStatus,
  sideDatabase,
  startReplica,
  waitingRun,
  type Replica,
} from './replicas.ts';

/**
 * Review 46: decisions made through two control-plane processes on one PostgreSQL. A two-person
 * approval drafted on one replica is decided on the other; two approvers on the two replicas race;
 * one idempotency key sent to both at once has one effect and both answers agree; sign-in guesses
 * spread over the replicas are counted together (ADR 0105: counted before checked).
 */
describe('decisions across two control-plane replicas', () => {
  let a: Replica;
  let b: Replica;
  let db: Database;
  const cookies = { ana: '', ben: '', cat: '' };
  beforeAll(async () => {
    const url = await testDatabaseUrl('r46_decisions');
    const env = { SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ACCOUNT: '3', SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ADDRESS: '1000' };
    [a, b] = await Promise.all([startReplica(url, env), startReplica(url, env)]);
    db = await sideDatabase(url);
    for (const who of ['ana', 'ben', 'cat'] as const)
      cookies[who] = await cookieFrom(who === 'ben' ? b.url : a.url, await newOperator(db, 'operator', who));
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.close();
  });

  const terminate = (runId: string, key = randomUUID()) => ({
    kind: 'run.terminate',
    target: { runId },
    expected: { runStatus: 'Waiting' },
    reason: 'review 46',
    idempotencyKey: key,
  });
  const draftOn = async (url: string, runId: string) => {
    const drafted = await rawCall(url, 'repairs.applyOne', {
      type: 'mutation',
      cookie: cookies.ana,
      input: terminate(runId),
    });
    expect(drafted.status, JSON.stringify(drafted.body)).toBe(200);
    const body = dataOf<{ status: string; approvalId: string }>(drafted);
    expect(body.status).toBe('awaiting_approval');
    return body.approvalId;
  };
  const repairRows = (runId: string) =>
    db.prisma.repairCommand.findMany({ where: { target_id: runId }, select: { status: true, actor: true } });

  it('a draft made on A is approved once on B; the drafter is refused on B', async () => {
    const runId = await waitingRun(db, a.url, cookies.ana);
    const approvalId = await draftOn(a.url, runId);
    const own = await rawCall(b.url, 'approvals.approve', {
      type: 'mutation',
      cookie: cookies.ana,
      input: { id: approvalId },
    });
    expect(own.status).toBe(403);
    const approved = await rawCall(b.url, 'approvals.approve', {
      type: 'mutation',
      cookie: cookies.ben,
      input: { id: approvalId },
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(await runStatus(db, runId)).toBe('Terminated');
    expect(await repairRows(runId)).toHaveLength(1);
  });

  it('two approvers racing on A and B: one applies, the other is told it was decided, one repair row', async () => {
    for (let round = 0; round < 5; round++) {
      const runId = await waitingRun(db, b.url, cookies.ana);
      const approvalId = await draftOn(b.url, runId);
      const [onA, onB] = await Promise.all([
        rawCall(a.url, 'approvals.approve', { type: 'mutation', cookie: cookies.cat, input: { id: approvalId } }),
        rawCall(b.url, 'approvals.approve', { type: 'mutation', cookie: cookies.ben, input: { id: approvalId } }),
      ]);
      expect([onA.status, onB.status].sort(), JSON.stringify([onA.body, onB.body])).toEqual([200, 409]);
      expect(await repairRows(runId)).toHaveLength(1);
      expect(await runStatus(db, runId)).toBe('Terminated');
      const approval = await db.prisma.repairApproval.findUniqueOrThrow({ where: { id: approvalId } });
      expect(approval.status).toBe('applied');
      expect(approval.decided_by).toBe(onA.status === 200 ? await whoIs(cookies.cat) : await whoIs(cookies.ben));
    }
  });

  const whoIs = async (cookie: string) =>
    dataOf<{ operator: { name: string } }>(await rawCall(a.url, 'auth.me', { cookie })).operator.name;

  it('one idempotency key sent to A and B at once: one effect, both answers name the same repair', async () => {
    for (let round = 0; round < 5; round++) {
      const runId = await waitingRun(db, a.url, cookies.ana);
      const cancel = {
        kind: 'run.cancel',
        target: { runId },
        expected: { runStatus: 'Waiting' },
        reason: 'review 46',
        idempotencyKey: randomUUID(),
      };
      const [onA, onB] = await Promise.all([
        rawCall(a.url, 'repairs.applyOne', { type: 'mutation', cookie: cookies.ana, input: cancel }),
        rawCall(b.url, 'repairs.applyOne', { type: 'mutation', cookie: cookies.ana, input: cancel }),
      ]);
      expect([onA.status, onB.status], JSON.stringify([onA.body, onB.body])).toEqual([200, 200]);
      const [ra, rb] = [
        dataOf<{ id: string; status: string; replayed: boolean }>(onA),
        dataOf<{ id: string; status: string; replayed: boolean }>(onB),
      ];
      expect(ra.id).toBe(rb.id);
      expect([ra.status, rb.status]).toEqual(['applied', 'applied']);
      expect([ra.replayed, rb.replayed].sort()).toEqual([false, true]);
      expect(await repairRows(runId)).toHaveLength(1);
    }
  });

  it('one gated key drafted on A and B at once: one draft, both answers name it', async () => {
    for (let round = 0; round < 5; round++) {
      const runId = await waitingRun(db, a.url, cookies.ana);
      const cmd = terminate(runId);
      const [onA, onB] = await Promise.all([
        rawCall(a.url, 'repairs.applyOne', { type: 'mutation', cookie: cookies.ana, input: cmd }),
        rawCall(b.url, 'repairs.applyOne', { type: 'mutation', cookie: cookies.ana, input: cmd }),
      ]);
      expect([onA.status, onB.status], JSON.stringify([onA.body, onB.body])).toEqual([200, 200]);
      const ids = [onA, onB].map((x) => dataOf<{ approvalId: string }>(x).approvalId);
      expect(ids[0]).toBe(ids[1]);
      expect(await db.prisma.repairApproval.count({ where: { target_id: runId } })).toBe(1);
      expect(await db.prisma.auditEvent.count({ where: { action: 'repair_drafted', target_id: ids[0] } })).toBe(1);
    }
  });

  it('guesses spread over A and B are counted together: no more passwords checked than the limit (3)', async () => {
    const name = await newOperator(db, 'viewer', 'victim');
    const guesses = Array.from({ length: 16 }, (_, i) =>
      rawCall(i % 2 === 0 ? a.url : b.url, 'auth.signIn', {
        type: 'mutation',
        input: { name, password: `wrong guess number ${i}` },
      }),
    );
    const answers = await Promise.all(guesses);
    const statuses = answers.map((x) => x.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(13);
    const rows = await db.prisma.auditEvent.groupBy({
      by: ['outcome'],
      where: { action: 'sign_in', target_id: name },
      _count: true,
    });
    expect(Object.fromEntries(rows.map((r) => [r.outcome, r._count]))).toEqual({ refused: 3, rate_limited: 13 });
    // The right password is refused too while the window is full, on either replica.
    for (const url of [a.url, b.url]) {
      const right = await rawCall(url, 'auth.signIn', {
        type: 'mutation',
        input: { name, password: 'correct horse battery staple' },
      });
      expect(right.status).toBe(429);
    }
  });

  it('an approve on A and a reject on B at once: one decision, and the run is as that decision says', async () => {
    for (let round = 0; round < 5; round++) {
      const runId = await waitingRun(db, a.url, cookies.ana);
      const approvalId = await draftOn(a.url, runId);
      const [approve, reject] = await Promise.all([
        rawCall(a.url, 'approvals.approve', { type: 'mutation', cookie: cookies.cat, input: { id: approvalId } }),
        rawCall(b.url, 'approvals.reject', {
          type: 'mutation',
          cookie: cookies.ben,
          input: { id: approvalId, reason: 'not today' },
        }),
      ]);
      expect([approve.status, reject.status].sort(), JSON.stringify([approve.body, reject.body])).toEqual([200, 409]);
      const approval = await db.prisma.repairApproval.findUniqueOrThrow({ where: { id: approvalId } });
      const rejectedRows = await db.prisma.auditEvent.count({
        where: { action: 'repair_rejected', target_id: approvalId },
      });
      if (approve.status === 200) {
        expect(approval.status).toBe('applied');
        expect(await runStatus(db, runId)).toBe('Terminated');
        expect(await repairRows(runId)).toHaveLength(1);
        expect(rejectedRows).toBe(0);
      } else {
        expect(approval.status).toBe('rejected');
        expect(await runStatus(db, runId)).toBe('Waiting');
        expect(await repairRows(runId)).toHaveLength(0);
        expect(rejectedRows).toBe(1);
      }
    }
  });
});
