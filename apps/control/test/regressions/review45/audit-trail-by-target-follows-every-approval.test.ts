import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import {
  apiClient,
  createTestOperator,
  signInCookie,
  startWaitingRun,
  testDatabaseUrl,
} from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

/**
 * Review 45, ADR 0119: `audit.page({ target })` lists the `audit_events` rows of the approvals drafted
 * on the target, found through `repair_approvals (target_type, target_id)`, "newest first, at most
 * 500". Nothing refuses a 501st draft on one run, and the trail answers no sign that it stopped
 * following: paging to the end, the oldest drafts are simply not there.
 */
describe('review 45: the audit trail filtered by a target', () => {
  let plane: ControlPlane;
  let ana = '';
  let vic = '';
  let ben = '';
  let admin = '';
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('r45_audit'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    ana = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    vic = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    ben = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    admin = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
  }, 120_000);
  afterAll(async () => {
    await plane?.stop();
  });

  /** Every row of the trail filtered by `target`, paged to the end. */
  async function wholeTrail(target: string) {
    const api = apiClient(plane.url, vic);
    const items: { action: string; targetId: string | null }[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await api.audit.page.query({ target, limit: 200, ...(cursor ? { cursor } : {}) });
      items.push(...page.items);
      if (!page.nextCursor) return items;
      cursor = page.nextCursor;
    }
  }

  it('lists the draft of every approval drafted on a run, the 501st included', async () => {
    // A run parked Waiting with nothing to wake it: 501 drafts take longer than a demo reservation's
    // 30 s wait on a loaded machine, and a run that moved would turn the drafts into conflicts.
    const runId = (
      await plane.db.driver.query<{ id: string }>(
        `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, started_at)
       values ('r45.parked', 1, 'Waiting', '{}'::jsonb, now()) returning id::text as id`,
      )
    )[0]!.id;
    const api = apiClient(plane.url, ana);
    const drafts = 501;
    const ids: string[] = [];
    // Four at a time through the real API: each is a gated terminate, answered awaiting_approval.
    for (let i = 0; i < drafts; i += 4) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(4, drafts - i) }, () =>
          api.repairs.applyOne.mutate({
            kind: 'run.terminate',
            target: { runId },
            expected: { runStatus: 'Waiting' },
            reason: 'charged twice',
            idempotencyKey: randomUUID(),
          }),
        ),
      );
      for (const b of batch) {
        expect(b.status).toBe('awaiting_approval');
        ids.push((b as { approvalId: string }).approvalId);
      }
    }
    expect(await plane.db.prisma.repairApproval.count({ where: { target_id: runId } })).toBe(drafts);

    const trail = await wholeTrail(runId);
    const drafted = new Set(trail.filter((e) => e.action === 'repair_drafted').map((e) => e.targetId));
    const missing = ids.filter((id) => !drafted.has(id));
    expect(missing).toEqual([]);
  }, 120_000);

  it('a bulk approval is followed: each target lists the bulk draft and its own applied item of it', async () => {
    await apiClient(plane.url, admin).approvalPolicy.set.mutate({ gatedCommands: ['run.terminate'], bulkThreshold: 2 });
    const runs = [
      await startWaitingRun(plane, ana),
      await startWaitingRun(plane, ana),
      await startWaitingRun(plane, ana),
    ];
    const drafted = await apiClient(plane.url, ana).repairs.applyBulk.mutate({
      kind: 'run.cancel',
      reason: 'carrier outage',
      idempotencyKey: randomUUID(),
      items: runs.map((runId) => ({ target: { runId }, expected: { runStatus: 'Waiting' } })),
    });
    expect((drafted as { status?: string }).status).toBe('awaiting_approval');
    const approvalId = (drafted as { approvalId: string }).approvalId;
    await apiClient(plane.url, ben).approvals.approve.mutate({ id: approvalId });
    const outside = await startWaitingRun(plane, ana);
    expect((await wholeTrail(outside)).filter((e) => e.targetId === approvalId)).toEqual([]);
    for (const runId of runs) {
      const trail = await wholeTrail(runId.toUpperCase());
      const cancel = trail.filter((e) => e.action === 'run.cancel');
      expect(cancel.map((e) => e.targetId)).toEqual([runId]);
      // The bulk's own draft names the approval; each of its targets lists it (ADR 0119, second addendum).
      expect(trail.filter((e) => e.targetId === approvalId).map((e) => e.action)).toEqual(['repair_drafted']);
    }
  }, 60_000);
});
