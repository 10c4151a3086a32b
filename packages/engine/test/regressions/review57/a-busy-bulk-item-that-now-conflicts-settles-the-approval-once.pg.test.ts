import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/index.ts';
import { openTallyEngines, type TallyEngines } from '../review54/support/tally-engines.ts';
import { tallyProcess } from '../review54/support/tally-process.ts';

/**
 * Review 57 (ADR 0132 §4). An approved bulk with a busy item stays `applying` and a resumer applies
 * the rest. Attack: the busy item's target changes meanwhile (its expected version no longer holds),
 * and two replicas' resumers run at once. Guarantees: the approval is settled (never `applying` for
 * ever), the item that now conflicts is named `conflict`, the applied item is applied once (one audit
 * row), and a settled bulk is not applied again by a later resumer pass.
 *
 * Driven by progress: the busy row is held FOR UPDATE by a test session until the approve has answered.
 */
const TX_MS = 1_000;

describe('review 57: an approved bulk whose busy item now conflicts (real PostgreSQL)', () => {
  let t: TallyEngines;
  let engine: Engine;
  let other: Engine;
  beforeAll(async () => {
    t = await openTallyEngines({ txMs: TX_MS, replicas: 2, adminPoolSize: 3 });
    [engine, other] = [t.engines[0]!, t.engines[1]!];
    await engine.approvals.setPolicy(
      { gatedCommands: ['instance.force_transition'], bulkThreshold: 1 },
      { actor: 'r57-admin' },
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  const instance = async () => (await t.begin()).instance;

  it('a busy bulk item whose target changed meanwhile is settled as conflict, once, by racing resumers', async () => {
    const [a, b] = [await instance(), await instance()];
    const drafted = await engine.approvals.submitBulk({
      kind: 'instance.force_transition',
      to: 'Done',
      actor: 'r57-drafter',
      reason: 'closing stuck tallies',
      idempotencyKey: randomUUID(),
      items: [a, b].map((i) => ({ target: { instanceId: i.id }, expected: { state: 'Open', version: i.version } })),
    });
    if (!('status' in drafted) || drafted.status !== 'awaiting_approval') throw new Error('bulk not gated');
    const holder = await t.holdInstances([b.id]);
    const approved = await engine.approvals.approve(drafted.approvalId, 'r57-approver').then(
      (v) => `answered ${v.status}`,
      (e: unknown) => `threw ${(e as { code?: string }).code}`,
    );
    expect(approved).toBe('threw target_busy');
    // While it is owed, the approval's view says applying and names each item: a applied, b busy.
    const owed = await engine.approvals.get(drafted.approvalId);
    const owedItems = (owed?.result as { items?: { target: { id: string }; outcome: string }[] } | null)?.items ?? [];
    expect({
      status: owed?.status,
      a: owedItems.find((i) => i.target.id === a.id)?.outcome,
      b: owedItems.find((i) => i.target.id === b.id)?.outcome,
    }).toEqual({ status: 'applying', a: 'applied', b: 'busy' });
    await holder.rollback();
    // Meanwhile b's state changes: the drafted expectation (its version) no longer holds.
    await engine.processes.deliver(tallyProcess, {
      id: randomUUID(),
      type: 'Add',
      payload: { key: b.correlation_key, n: 1 },
    });

    // Two replicas' resumers at once.
    const resumed = await Promise.all([engine.approvals.resumeInterrupted(), other.approvals.resumeInterrupted()]);
    const later = await Promise.all([engine.approvals.resumeInterrupted(), other.approvals.resumeInterrupted()]);
    const view = await engine.approvals.get(drafted.approvalId);
    const items = (view?.result as { items?: { target: { id: string }; outcome: string }[] } | null)?.items ?? [];
    const audits = await t.dbs[0]!.prisma.repairCommand.findMany({ where: { approval_id: drafted.approvalId } });
    const said = JSON.stringify({ resumed, later, status: view?.status, items, audits: audits.length }).slice(0, 3000);
    expect(
      {
        status: view?.status,
        a: items.find((i) => i.target.id === a.id)?.outcome,
        b: items.find((i) => i.target.id === b.id)?.outcome,
        resumedOnce: resumed[0] + resumed[1],
        laterPasses: later[0] + later[1],
        auditsOfA: audits.filter((r) => r.target_id === a.id && r.status !== 'conflict').length,
        bState: (await t.dbs[0]!.prisma.sagaInstance.findUniqueOrThrow({ where: { id: b.id } })).current_state,
      },
      said,
    ).toEqual({
      status: 'applied',
      a: 'applied',
      b: 'conflict',
      resumedOnce: 1,
      laterPasses: 0,
      auditsOfA: 1,
      bState: 'Open',
    });
  }, 60_000);
});
