import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RepairCommand } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { actions, flows, ticket } from '../../repairs/support/repair-fixtures.ts';
import { waitingRun as parkedOnSignal } from '../../repairs/support/waiting-run.ts';

/**
 * ADR 0027: "a run … an open approval names" is never pruned, so a second operator can still decide
 * it. `submit` accepts a run id in any letter case (assertUuid's pattern is case-insensitive) and
 * stores the command as given; retention matches the approval's `payload.target.runId` as text
 * against `flow_runs.id::text` (lower case). These cases draft a gated terminate on a Waiting run,
 * let the run finish (terminated directly), age it past the cutoff and prune: the run must stay, and
 * the approval must then end as `conflict` with the state now. The same for an instance's transitions
 * (matched by `payload.target.instanceId`).
 */
describe(`a pending approval holds its run against retention, however the run id is spelt (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows,
      actions,
      processes: [ticket],
      config: { approvals: { expire_after_seconds: 86_400 } },
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  const waitingRun = () => parkedOnSignal(t);

  const terminate = (runId: string) =>
    ({
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      actor: 'ana',
      reason: 'duplicate order',
      idempotencyKey: randomUUID(),
    }) as RepairCommand;

  /** Drafts through `draft`, finishes the run, ages it 60 s past a 10 s cutoff, prunes; returns the prune report. */
  async function draftFinishAndPrune(draft: (runId: string) => Promise<string>) {
    const runId = await waitingRun();
    const approvalId = await draft(runId);
    expect((await t.engine.approvals.get(approvalId))?.status).toBe('pending');
    await t.engine.terminate(runId, { reason: 'finished another way while the draft waited' });
    expect((await t.engine.getRun(runId))?.run.status).toBe('Terminated');
    t.clock.advance(60_000);
    const report = await t.engine.retention.prune({ olderThanSeconds: 10 });
    return { runId, approvalId, report };
  }

  /** What a second operator finds after the prune: is the run there, what does approving answer, what is the approval now. */
  async function afterPrune(runId: string, approvalId: string) {
    const runKept = (await t.engine.getRun(runId)) !== null;
    const approve = await t.engine.approvals.approve(approvalId, 'ben').then(
      (v) => v.status as string,
      (e: unknown) => (e as { code?: string }).code ?? String(e),
    );
    return { runKept, approve, approvalStatus: (await t.engine.approvals.get(approvalId))?.status };
  }

  const single = (spell: (id: string) => string) => async (runId: string) => {
    const r = await t.engine.approvals.submit(terminate(spell(runId)));
    if (r.status !== 'awaiting_approval') throw new Error(`not gated: ${r.status}`);
    return r.approvalId;
  };

  it('control: a run id in lower case keeps the run, and the approval then ends as conflict', async () => {
    const { runId, approvalId, report } = await draftFinishAndPrune(single((id) => id));
    expect(report.deleted.flow_runs).toBe(0);
    expect(await t.engine.getRun(runId)).not.toBeNull();
    await expect(t.engine.approvals.approve(approvalId, 'ben')).rejects.toMatchObject({ code: 'repair_conflict' });
    expect((await t.engine.approvals.get(approvalId))?.status).toBe('conflict');
  });

  it('a run id in upper case (accepted by submit) keeps the run too, and the approval then ends as conflict', async () => {
    const { runId, approvalId } = await draftFinishAndPrune(single((id) => id.toUpperCase()));
    expect(await afterPrune(runId, approvalId)).toEqual({
      runKept: true,
      approve: 'repair_conflict',
      approvalStatus: 'conflict',
    });
  });

  it('a bulk item naming its run in upper case keeps the run too', async () => {
    await t.engine.approvals.setPolicy({ gatedCommands: ['run.terminate'], bulkThreshold: 10 }, { actor: 'root' });
    const { runId, approvalId } = await draftFinishAndPrune(async (id) => {
      const { target: _target, expected, ...shared } = terminate(id);
      const r = await t.engine.approvals.submitBulk({
        ...shared,
        items: [{ target: { runId: id.toUpperCase() }, expected }],
      });
      if (!('status' in r) || r.status !== 'awaiting_approval') throw new Error('bulk not gated');
      return r.approvalId;
    });
    expect(await afterPrune(runId, approvalId)).toEqual({
      runKept: true,
      approve: 'applied',
      approvalStatus: 'applied',
    });
  });

  /**
   * The same for an instance: a gated force_transition drafted on an open ticket (its instance id in
   * upper case), the ticket then closed by its own operator command and aged: its transitions are
   * what a second operator's decision is judged against, and must stay while the approval is open.
   */
  /** Drafts the force_transition with the instance id spelt by `spell`, closes and ages the ticket, prunes. */
  async function draftOnATicketCloseItAndPrune(spell: (id: string) => string) {
    await t.engine.approvals.setPolicy(
      { gatedCommands: ['instance.force_transition', 'run.terminate'], bulkThreshold: 10 },
      { actor: 'root' },
    );
    const pm = t.engine.processes;
    const key = `T-${randomUUID()}`;
    const { instanceId } = await pm.deliver(ticket, { id: `o-${key}`, type: 'Opened', payload: { key } });
    await pm.deliver(ticket, { id: `r-${key}`, type: 'Reviewed', payload: { key } });
    if (!instanceId) throw new Error('no instance');
    const r = await t.engine.approvals.submit({
      kind: 'instance.force_transition',
      target: { instanceId: spell(instanceId) },
      expected: { state: 'Review', version: (await pm.find(instanceId))?.version ?? -1 },
      to: 'Open',
      actor: 'ana',
      reason: 'reopen for another look',
      idempotencyKey: randomUUID(),
    });
    if (r.status !== 'awaiting_approval') throw new Error(`not gated: ${r.status}`);
    await pm.runOperatorCommand(ticket, instanceId, {
      command: 'Close',
      input: { resolution: 'fixed' },
      expectedState: 'Review',
      operator: 'cleo',
      reason: 'done',
      idempotencyKey: randomUUID(),
    });
    expect((await pm.find(instanceId))?.status).toBe('COMPLETED');
    t.clock.advance(60_000);
    await t.engine.retention.prune({ olderThanSeconds: 10 });
    return {
      transitionsKept: await t.db.prisma.processTransition.count({ where: { instance_id: instanceId } }),
      approval: (await t.engine.approvals.get(r.approvalId))?.status,
    };
  }

  it('control: an instance id in lower case keeps the closed instance transitions while the approval is open', async () => {
    expect(await draftOnATicketCloseItAndPrune((id) => id)).toEqual({ transitionsKept: 3, approval: 'pending' });
  });

  it('an instance id in upper case keeps the closed instance transitions while the approval is open', async () => {
    expect(await draftOnATicketCloseItAndPrune((id) => id.toUpperCase())).toEqual({
      transitionsKept: 3,
      approval: 'pending',
    });
  });
});
