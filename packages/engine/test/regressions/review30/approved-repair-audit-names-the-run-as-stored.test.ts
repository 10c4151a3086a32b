import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { actions, flows, switches, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * ADR 0020: an approval's audit "says who did what" — the repair row names the drafter (actor), the
 * approver and the target. Every reader of a run's audit trail finds it by the run's id as stored
 * (`repair_commands.target_id = <run id>`: the control plane's run history, read-run-history.ts, and
 * the audit page's target filter, page-audit.ts). `submit` accepts a run id in upper case; the
 * approved terminate must still be found under the run's id.
 */
describe(`an approved repair's audit row is found under its run's id (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows, actions });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('a terminate drafted with the run id in upper case and approved by a second operator', async () => {
    switches.variant = 'a';
    const { runId } = await t.engine.startFlow(waiter, null);
    await t.drive(runId, { skipTime: false, until: (d) => d.run.waitingFor?.startsWith('signal') ?? false });
    await t.engine.stopWorkers();
    const r = await t.engine.approvals.submit({
      kind: 'run.terminate',
      target: { runId: runId.toUpperCase() },
      expected: { runStatus: 'Waiting' },
      actor: 'ana',
      reason: 'duplicate order',
      idempotencyKey: randomUUID(),
    });
    if (r.status !== 'awaiting_approval') throw new Error(`not gated: ${r.status}`);
    expect(await t.engine.approvals.approve(r.approvalId, 'ben')).toMatchObject({ status: 'applied' });
    expect((await t.engine.getRun(runId))?.run.status).toBe('Terminated');

    const audit = await t.db.prisma.repairCommand.findMany({ where: { target_id: runId } });
    const approval = await t.engine.approvals.get(r.approvalId);
    expect({
      auditRowsUnderRunId: audit.map((a) => [a.actor, a.approved_by, a.command, a.status]),
      approvalTarget: approval?.target,
    }).toEqual({
      auditRowsUnderRunId: [['ana', 'ben', 'run.terminate', 'applied']],
      approvalTarget: { type: 'run', id: runId },
    });
  });
});
