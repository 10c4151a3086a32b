import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RepairCommand } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { fulfil, rowsOf } from './support/fulfil-model.ts';

/**
 * Review 59, found by `process-manager-model.test.ts` (a release by skip that resumed a kept message).
 * ADR 0016: a repair is previewed with "the effects (transitions, … outbox messages, history rows …)",
 * and "apply re-plans under the lock; its result's effects are the preview's when nothing moved"; the
 * audit row's `result` says what the command did. ARCHITECTURE: a repair "is previewed (the transition,
 * compensations and outbox messages it would cause)". ADR 0008: a release applies the messages the
 * instance kept while quarantined, in its own transaction.
 *
 * An order is quarantined in Reserving on a poison message; while quarantined the inventory service's
 * `Reserved` arrives and is kept. Releasing it (skip) applies `Reserved`: the order moves Reserving →
 * Booking, `BookShipment` is queued and the shipment deadline armed. The preview and the audit row.
 */
describe(`review 59: a release's preview and audit row name what its kept messages do (${testDbKind()})`, () => {
  let t!: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [],
      actions: [],
      processes: [fulfil],
      config: { processes: { quarantine_after_seconds: 5, store_retry: { max_attempts: 1 } } },
    });
  });
  afterAll(async () => {
    await t?.closeAll();
  });

  it('a release by skip that will apply a kept message previews and audits its transition and outbox message', async () => {
    const key = `r59-${randomUUID().slice(0, 8)}`;
    const pm = t.engine.processes;
    const msg = (id: string, type: string) => ({ id: `${key}-${id}`, type, payload: { key, tag: `${key}-${id}` } });
    const paid = await pm.deliver(fulfil, msg('paid', 'Paid'));
    const id = paid.instanceId!;
    await expect(pm.deliver(fulfil, msg('glitch-1', 'Glitch'))).rejects.toThrow(/r59 glitch/);
    t.clock.advance(10_000);
    expect((await pm.deliver(fulfil, msg('glitch-2', 'Glitch'))).outcome).toBe('quarantined');
    expect((await pm.deliver(fulfil, msg('reserved', 'Reserved'))).outcome).toBe('skipped_quarantined');
    const before = await rowsOf(t.db, id);
    expect({ state: before.inst!.current_state, status: before.inst!.status, outbox: before.outbox.length }).toEqual({
      state: 'Reserving',
      status: 'QUARANTINED',
      outbox: 1,
    });

    const version = (await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } })).version;
    const cmd = {
      kind: 'instance.release',
      mode: 'skip',
      target: { instanceId: id },
      expected: { state: 'Reserving', version },
      actor: 'r59@example.test',
      reason: 'review 59: the glitch is a known bad message',
      idempotencyKey: `r59-${randomUUID()}`,
    } as RepairCommand;
    const preview = await t.engine.repairs.preview(cmd);
    const applied = await t.engine.repairs.apply(cmd);
    const after = await rowsOf(t.db, id);
    const audit = await t.db.prisma.repairCommand.findUniqueOrThrow({ where: { id: applied.id } });
    const auditEffects = (audit.result as unknown as { effects: typeof applied.effects }).effects;

    // What the release did (asserted so the comparison below is about the preview and the audit only).
    expect({
      state: after.inst!.current_state,
      status: after.inst!.status,
      sent: after.outbox.slice(1).map((o) => o.type),
    }).toEqual({ state: 'Booking', status: 'ACTIVE', sent: ['BookShipment'] });

    const said = (e: typeof applied.effects) => ({
      moves: e.transitions.filter((x) => x.subject === `instance ${id}`).map((x) => `${x.from} -> ${x.to}`),
      outbox: e.outboxMessages.map((o) => o.type),
    });
    expect({
      preview: said(preview.effects),
      applyResult: said(applied.effects),
      auditRow: said(auditEffects),
    }).toEqual({
      preview: { moves: ['Reserving -> Booking'], outbox: ['BookShipment'] },
      applyResult: { moves: ['Reserving -> Booking'], outbox: ['BookShipment'] },
      auditRow: { moves: ['Reserving -> Booking'], outbox: ['BookShipment'] },
    });
  });

  it('a release by skip that stops on a kept poison message does not say it made the instance ACTIVE', async () => {
    const key = `r59-${randomUUID().slice(0, 8)}`;
    const pm = t.engine.processes;
    const msg = (id: string, type: string) => ({ id: `${key}-${id}`, type, payload: { key, tag: `${key}-${id}` } });
    const id = (await pm.deliver(fulfil, msg('paid', 'Paid'))).instanceId!;
    await expect(pm.deliver(fulfil, msg('glitch-1', 'Glitch'))).rejects.toThrow(/r59 glitch/);
    t.clock.advance(10_000);
    expect((await pm.deliver(fulfil, msg('glitch-2', 'Glitch'))).outcome).toBe('quarantined');
    // Kept while quarantined: another poison message.
    expect((await pm.deliver(fulfil, msg('glitch-3', 'Glitch'))).outcome).toBe('skipped_quarantined');
    const version = (await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } })).version;
    const cmd = {
      kind: 'instance.release',
      mode: 'skip',
      target: { instanceId: id },
      expected: { state: 'Reserving', version },
      actor: 'r59@example.test',
      reason: 'review 59: skip the known bad message',
      idempotencyKey: `r59-${randomUUID()}`,
    } as RepairCommand;
    const applied = await t.engine.repairs.apply(cmd);
    const after = await rowsOf(t.db, id);
    const audit = await t.db.prisma.repairCommand.findUniqueOrThrow({ where: { id: applied.id } });
    const auditEffects = (audit.result as unknown as { effects: typeof applied.effects }).effects;
    expect({ status: after.inst!.status, failure: after.inst!.failure_redelivery_key }).toEqual({
      status: 'QUARANTINED',
      failure: `${key}-glitch-3`,
    });
    // The audit trail's statement of the instance's status change must not contradict the instance.
    const statusMoves = (e: typeof applied.effects) =>
      e.transitions.filter((x) => x.subject === `instance ${id} status`).map((x) => `${x.from} -> ${x.to}`);
    expect({ applyResult: statusMoves(applied.effects), auditRow: statusMoves(auditEffects) }).not.toEqual({
      applyResult: ['QUARANTINED -> ACTIVE'],
      auditRow: ['QUARANTINED -> ACTIVE'],
    });
  });
});
