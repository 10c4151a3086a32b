import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/index.ts';
import type { HeldRows } from '../../support/held-rows.ts';
import { openTallyEngines, type TallyEngines } from '../review54/support/tally-engines.ts';

/**
 * Review 56 (ADR 0132 §1 with ADR 0020/0121). A repair whose transaction gives up on a row another
 * session holds answers `target_busy`: nothing changed, nothing audited, "send the same command again
 * once the other session lets go". For a gated command that answer reaches the second operator:
 * - one command: its approval must stay pending (visible, approvable again), and approving again
 *   once the row is let go applies it;
 * - a bulk: the other items apply, the answer names the busy one as busy, and the approved decision
 *   is not silently dropped for the busy item (a transient lock is not the operator's "no").
 */
const TX_MS = 1_000;

describe('review 56: an approved repair whose target another session holds (real PostgreSQL)', () => {
  let t: TallyEngines;
  let engine: Engine;
  let holder: HeldRows | undefined;
  beforeAll(async () => {
    t = await openTallyEngines({ txMs: TX_MS });
    engine = t.engines[0]!;
    await engine.approvals.setPolicy(
      { gatedCommands: ['instance.force_transition'], bulkThreshold: 1 },
      { actor: 'r56-admin' },
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  const instance = async () => (await t.begin()).instance;
  async function hold(id: string) {
    holder = await t.holdInstances([id]);
  }
  async function letGo() {
    await holder!.rollback();
    holder = undefined;
  }

  it('a gated repair approved while its target is busy stays pending and applies when approved again', async () => {
    const inst = await instance();
    const drafted = await engine.approvals.submit({
      kind: 'instance.force_transition',
      target: { instanceId: inst.id },
      expected: { state: 'Open', version: inst.version },
      to: 'Done',
      actor: 'r56-drafter',
      reason: 'closing a stuck tally',
      idempotencyKey: randomUUID(),
    });
    if (!('status' in drafted) || drafted.status !== 'awaiting_approval') throw new Error('not gated');
    await hold(inst.id);
    const first = await engine.approvals.approve(drafted.approvalId, 'r56-approver').then(
      () => 'applied',
      (e: unknown) => `threw ${(e as { code?: string }).code}`,
    );
    expect(first).toBe('threw target_busy');
    expect(await engine.approvals.get(drafted.approvalId)).toMatchObject({ status: 'pending' });
    await letGo();
    const again = await engine.approvals.approve(drafted.approvalId, 'r56-approver');
    expect(again).toMatchObject({ status: 'applied' });
    expect((await t.dbs[0]!.prisma.sagaInstance.findUniqueOrThrow({ where: { id: inst.id } })).current_state).toBe(
      'Done',
    );
  }, 60_000);

  it('an approved bulk with one busy item applies the rest, names the busy one, and does not drop it', async () => {
    const [a, b] = [await instance(), await instance()];
    const drafted = await engine.approvals.submitBulk({
      kind: 'instance.force_transition',
      to: 'Done',
      actor: 'r56-drafter',
      reason: 'closing stuck tallies',
      idempotencyKey: randomUUID(),
      items: [a, b].map((i) => ({ target: { instanceId: i.id }, expected: { state: 'Open', version: i.version } })),
    });
    if (!('status' in drafted) || drafted.status !== 'awaiting_approval') throw new Error('bulk not gated');
    await hold(b.id);
    const approved = await engine.approvals.approve(drafted.approvalId, 'r56-approver').then(
      (v) => `answered ${v.status}`,
      (e: unknown) => `threw ${(e as { code?: string }).code}`,
    );
    await letGo();
    const view = await engine.approvals.get(drafted.approvalId);
    const items = (view?.result as { items?: { target: { id: string }; outcome: string; message: string | null }[] })
      ?.items;
    const states = Object.fromEntries(
      await Promise.all(
        [a, b].map(
          async (i) =>
            [
              i.id === a.id ? 'a' : 'b (busy)',
              (await t.dbs[0]!.prisma.sagaInstance.findUniqueOrThrow({ where: { id: i.id } })).current_state,
            ] as const,
        ),
      ),
    );
    // Once the row is let go, can the operators still have the approved command carried out?
    const approvedAgain = await engine.approvals.approve(drafted.approvalId, 'r56-approver-2').then(
      (v) => `answered ${v.status}`,
      (e: unknown) => `threw ${(e as { code?: string }).code}`,
    );
    const resumed = await engine.approvals.resumeInterrupted();
    const busy = items?.find((i) => i.target.id === b.id);
    const said = JSON.stringify({ approved, status: view?.status, items, states, approvedAgain, resumed }).slice(
      0,
      3000,
    );
    // The other item applied.
    expect(states.a, said).toBe('Done');
    expect(
      {
        // The busy item is named as busy (the code a single command answers), not as a failure of the engine.
        busyItemOutcome: busy?.outcome,
        // The approved decision is not settled as done while the busy item was never applied and nothing
        // (a second approval, the bulk resumer) will apply it.
        settledWithTheBusyItemUndone: view?.status === 'applied' && states['b (busy)'] === 'Open',
      },
      said,
    ).toEqual({
      busyItemOutcome: expect.not.stringMatching(/^failed$/) as unknown,
      settledWithTheBusyItemUndone: false,
    });
  }, 60_000);
});
