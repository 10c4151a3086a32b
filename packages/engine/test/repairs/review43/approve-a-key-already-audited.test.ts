import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RepairCommand } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { fuzzActions, gates, saga, scripts } from '../review40/support/fuzz-saga.ts';
import { gateEverything, until } from './support/run-rows.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

/**
 * Review 43: a pending approval whose idempotency key already has an audit row (ADR 0020 keeps
 * `engine.repairs.apply` ungated for trusted host code, and the key is the same command). Approving
 * it must end the approval with a typed answer, never leave it pending behind an untyped error.
 */
describe(`review 43: approving a draft whose key was already applied (${testDbKind()})`, () => {
  let t!: T;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [saga], actions: fuzzActions, config: { worker: { concurrency: 4 } } });
    await gateEverything(t);
    t.engine.startWorkers();
  });
  afterAll(async () => {
    for (const g of gates.values()) g(true);
    await t?.closeAll();
  });

  it('DEFECT: the approval is decided (approval_decided, conflict or replayed), not left pending behind a raw database error', async () => {
    const key = randomUUID();
    scripts.set(key, { steps: ['gate', 'ok', 'ok'] });
    const { runId } = await t.engine.startFlow(saga, { key });
    await until(
      async () => (gates.has(`${key}:1`) ? t.engine.getRun(runId) : null),
      (d) => d?.run.status === 'Running' && d.actions[0]?.status === 'Running',
      'step 1 at its gate',
    );
    const cmd = {
      kind: 'run.cancel',
      target: { runId },
      expected: { runStatus: 'Running' },
      actor: 'r43-drafter',
      reason: 'review 43: cancel it',
      idempotencyKey: randomUUID(),
    } as RepairCommand;
    const drafted = await t.engine.approvals.submit(cmd);
    if (drafted.status !== 'awaiting_approval') throw new Error('not gated');
    // The host's own code applies the same command, same key, ungated.
    expect(await t.engine.repairs.apply(cmd)).toMatchObject({ status: 'applied' });
    const approved = await t.engine.approvals.approve(drafted.approvalId, 'r43-approver').then(
      (v) => v.status,
      (e: { code?: string; message?: string }) => e.code ?? `untyped: ${e.message?.slice(0, 120)}`,
    );
    const after = await t.engine.approvals.get(drafted.approvalId);
    const events = await t.db.prisma.flowEvent.findMany({
      where: { run_id: runId, type: { in: ['repair.applied', 'run.cancel_requested'] } },
    });
    expect(events.map((e) => e.type).sort(), 'nothing applied twice').toEqual([
      'repair.applied',
      'run.cancel_requested',
    ]);
    const seen = { approved, approval: after?.status };
    expect(seen, `a typed answer and a decided approval: ${JSON.stringify(seen)}`).toMatchObject({
      approved: expect.stringMatching(/^(applied|approval_decided|repair_conflict|repair_refused)$/) as unknown,
    });
    expect(after?.status, 'the approval is left pending, and every later approve fails the same way').not.toBe(
      'pending',
    );
    gates.get(`${key}:1`)?.(true);
  });
});
