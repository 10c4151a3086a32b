import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RepairCommand, RepairEffects } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { rowsOf } from '../review59/support/fulfil-model.ts';
import { addFault, basket } from './support/basket-model.ts';

/**
 * Review 61, on ADR 0134 §4: "Its plan decides each kept message in arrival order from the state the
 * release leaves, as the release applies them. The preview, the answer and the audit row list their
 * transitions and outbox messages". ADR 0016: "apply re-plans under the lock; its result's effects are the
 * preview's when nothing moved"; the audit row's `result` says what the command did.
 *
 * A broker redelivers: the message an instance was quarantined on arrives once more while it is
 * quarantined, and is kept (`skipped_quarantined`, ADR 0008). The release handles that message itself
 * (retried or skipped, then in the inbox), so the release does not apply the kept copy again. Does the
 * preview say so?
 */
describe(`review 61: a release previews what it does with a redelivered stopped-on message (${testDbKind()})`, () => {
  let t!: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [],
      actions: [],
      processes: [basket],
      config: { processes: { quarantine_after_seconds: 5, store_retry: { max_attempts: 1 } } },
    });
  });
  afterEach(() => {
    addFault.broken = false;
  });
  afterAll(async () => {
    await t?.closeAll();
  });

  const said = (id: string, e: RepairEffects) => ({
    moves: e.transitions.filter((x) => x.subject === `instance ${id}`).map((x) => `${x.from} -> ${x.to}`),
    status: e.transitions.filter((x) => x.subject === `instance ${id} status`).map((x) => `${x.from} -> ${x.to}`),
    outbox: e.outboxMessages.map((o) => o.type),
  });

  /** An open basket quarantined on `AddItem` (redelivered past the budget), that id redelivered once more. */
  async function quarantinedOnRedeliveredItem() {
    const key = `r61-${randomUUID().slice(0, 8)}`;
    const pm = t.engine.processes;
    const id = (await pm.deliver(basket, { id: `${key}-start`, type: 'Start', payload: { key } })).instanceId!;
    const add = { id: `${key}-add-1`, type: 'AddItem', payload: { key, sku: 'sku-1' } };
    addFault.broken = true;
    await expect(pm.deliver(basket, add)).rejects.toThrow(/inventory client is down/);
    t.clock.advance(10_000);
    expect((await pm.deliver(basket, add)).outcome).toBe('quarantined');
    // The broker offers the same message again (at-least-once): kept while quarantined.
    expect((await pm.deliver(basket, add)).outcome).toBe('skipped_quarantined');
    const version = (await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } })).version;
    return { id, key, version };
  }

  async function previewAndApply(id: string, version: number, mode: 'retry' | 'skip') {
    const cmd = {
      kind: 'instance.release',
      mode,
      target: { instanceId: id },
      expected: { state: 'Open', version },
      actor: 'r61@example.test',
      reason: `review 61: release by ${mode}`,
      idempotencyKey: `r61-${randomUUID()}`,
    } as RepairCommand;
    const preview = await t.engine.repairs.preview(cmd);
    const applied = await t.engine.repairs.apply(cmd);
    const audit = await t.db.prisma.repairCommand.findUniqueOrThrow({ where: { id: applied.id } });
    const auditEffects = (audit.result as unknown as { effects: RepairEffects }).effects;
    return { preview, applied, auditEffects };
  }

  it('a release by skip of a redelivered poison message does not preview quarantining the instance again on it', async () => {
    const { id, version } = await quarantinedOnRedeliveredItem();
    // The inventory client is still down: the operator skips the item.
    const { preview, applied, auditEffects } = await previewAndApply(id, version, 'skip');
    const after = await rowsOf(t.db, id);
    // What the release did: the message skipped once, the instance ACTIVE in Open, nothing sent.
    expect({
      status: after.inst!.status,
      state: after.inst!.current_state,
      failure: after.inst!.failure_redelivery_key,
      sent: after.outbox.map((o) => o.type),
    }).toEqual({ status: 'ACTIVE', state: 'Open', failure: null, sent: [] });
    const expected = { moves: [], status: ['QUARANTINED -> ACTIVE'], outbox: [] };
    expect({
      preview: said(id, preview.effects),
      applyResult: said(id, applied.effects),
      auditRow: said(id, auditEffects),
    }).toEqual({ preview: expected, applyResult: expected, auditRow: expected });
  });

  it('a release by retry of a redelivered message previews its one reservation, not two', async () => {
    const { id, version } = await quarantinedOnRedeliveredItem();
    addFault.broken = false; // fixed: the operator retries the item
    const { preview, applied, auditEffects } = await previewAndApply(id, version, 'retry');
    const after = await rowsOf(t.db, id);
    // What the release did: the item added once, one ReserveItem sent.
    expect({
      status: after.inst!.status,
      items: (after.inst!.state as unknown as { items: string[] }).items,
      sent: after.outbox.map((o) => o.type),
    }).toEqual({ status: 'ACTIVE', items: ['sku-1'], sent: ['ReserveItem'] });
    const expected = { moves: ['Open -> Open'], status: ['QUARANTINED -> ACTIVE'], outbox: ['ReserveItem'] };
    expect({
      preview: said(id, preview.effects),
      applyResult: said(id, applied.effects),
      auditRow: said(id, auditEffects),
    }).toEqual({ preview: expected, applyResult: expected, auditRow: expected });
  });

  it('held: a kept message that completes the instance, and the kept ones after it, preview as apply does them', async () => {
    const key = `r61-${randomUUID().slice(0, 8)}`;
    const pm = t.engine.processes;
    const id = (await pm.deliver(basket, { id: `${key}-start`, type: 'Start', payload: { key } })).instanceId!;
    const add = (n: number) => ({ id: `${key}-add-${n}`, type: 'AddItem', payload: { key, sku: `sku-${n}` } });
    addFault.broken = true;
    await expect(pm.deliver(basket, add(1))).rejects.toThrow(/inventory client is down/);
    t.clock.advance(10_000);
    expect((await pm.deliver(basket, add(1))).outcome).toBe('quarantined');
    addFault.broken = false;
    // Kept: an item, the close (completes the basket), an item after it, a duplicate of the close.
    for (const m of [add(2), { id: `${key}-close`, type: 'Close', payload: { key } }, add(3)])
      expect((await pm.deliver(basket, m)).outcome).toBe('skipped_quarantined');
    expect((await pm.deliver(basket, { id: `${key}-close`, type: 'Close', payload: { key } })).outcome).toBe(
      'skipped_quarantined',
    );
    const version = (await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } })).version;
    const { preview, applied, auditEffects } = await previewAndApply(id, version, 'skip');
    const after = await rowsOf(t.db, id);
    expect({
      status: after.inst!.status,
      state: after.inst!.current_state,
      items: (after.inst!.state as unknown as { items: string[] }).items,
      sent: after.outbox.map((o) => o.type),
    }).toEqual({ status: 'COMPLETED', state: 'Closed', items: ['sku-2'], sent: ['ReserveItem', 'ChargeCard'] });
    const expected = {
      moves: ['Open -> Open', 'Open -> Closed'],
      status: ['QUARANTINED -> ACTIVE'],
      outbox: ['ReserveItem', 'ChargeCard'],
    };
    expect({
      preview: said(id, preview.effects),
      applyResult: said(id, applied.effects),
      auditRow: said(id, auditEffects),
    }).toEqual({ preview: expected, applyResult: expected, auditRow: expected });
  });

  it('held: a kept message that fails stops the release where the preview said, and the audit row says so', async () => {
    const key = `r61-${randomUUID().slice(0, 8)}`;
    const pm = t.engine.processes;
    const id = (await pm.deliver(basket, { id: `${key}-start`, type: 'Start', payload: { key } })).instanceId!;
    const add = (n: number, sku = `sku-${n}`) => ({ id: `${key}-add-${n}`, type: 'AddItem', payload: { key, sku } });
    addFault.broken = true;
    await expect(pm.deliver(basket, add(1))).rejects.toThrow(/inventory client is down/);
    t.clock.advance(10_000);
    expect((await pm.deliver(basket, add(1))).outcome).toBe('quarantined');
    addFault.broken = false;
    for (const m of [add(2), add(3, 'poison'), add(4)])
      expect((await pm.deliver(basket, m)).outcome).toBe('skipped_quarantined');
    const version = (await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } })).version;
    const { preview, applied, auditEffects } = await previewAndApply(id, version, 'skip');
    const after = await rowsOf(t.db, id);
    expect({
      status: after.inst!.status,
      failure: after.inst!.failure_redelivery_key,
      items: (after.inst!.state as unknown as { items: string[] }).items,
      sent: after.outbox.map((o) => o.type),
    }).toEqual({ status: 'QUARANTINED', failure: `${key}-add-3`, items: ['sku-2'], sent: ['ReserveItem'] });
    const expected = {
      moves: ['Open -> Open'],
      status: ['QUARANTINED -> ACTIVE', 'ACTIVE -> QUARANTINED'],
      outbox: ['ReserveItem'],
    };
    expect({
      preview: said(id, preview.effects),
      applyResult: said(id, applied.effects),
      auditRow: said(id, auditEffects),
    }).toEqual({ preview: expected, applyResult: expected, auditRow: expected });
  });

  it('held: past the first 100 kept messages, the preview counts what apply does', async () => {
    const key = `r61-${randomUUID().slice(0, 8)}`;
    const pm = t.engine.processes;
    const id = (await pm.deliver(basket, { id: `${key}-start`, type: 'Start', payload: { key } })).instanceId!;
    const add = (n: number) => ({ id: `${key}-add-${n}`, type: 'AddItem', payload: { key, sku: `sku-${n}` } });
    addFault.broken = true;
    await expect(pm.deliver(basket, add(0))).rejects.toThrow(/inventory client is down/);
    t.clock.advance(10_000);
    expect((await pm.deliver(basket, add(0))).outcome).toBe('quarantined');
    addFault.broken = false;
    for (let n = 1; n <= 105; n++) expect((await pm.deliver(basket, add(n))).outcome).toBe('skipped_quarantined');
    const version = (await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } })).version;
    const { preview, applied, auditEffects } = await previewAndApply(id, version, 'skip');
    const after = await rowsOf(t.db, id);
    expect({ status: after.inst!.status, sent: after.outbox.length }).toEqual({ status: 'ACTIVE', sent: 105 });
    for (const e of [preview.effects, applied.effects, auditEffects]) {
      expect({ moves: said(id, e).moves.length, outbox: said(id, e).outbox.length }).toEqual({
        moves: 100,
        outbox: 100,
      });
      expect(e.notes.join('\n')).toMatch(/5 more kept message\(s\).* 105 transition\(s\) and 105 outbox message\(s\)/);
    }
  });
});
