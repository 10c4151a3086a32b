import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/index.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { newMessageId, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';

/**
 * A process whose transitions can produce data its own schema refuses: `Rename` accepts an empty
 * name, the data does not; `Label` stores a Date, which JSON turns into a string the schema refuses.
 */
function account() {
  return defineProcess({
    name: 'account',
    states: ['Open', 'Frozen', 'Closed'],
    initial: 'Open',
    final: ['Closed'],
    data: z.object({ key: z.string(), name: z.string().min(1), labelledAt: z.date().optional() }),
    initialData: (key) => ({ key, name: 'unnamed' }),
    messages: {
      Rename: z.object({ key: z.string(), name: z.string() }),
      Label: z.object({ key: z.string() }),
      Freeze: z.object({ key: z.string() }),
    },
    correlate: (m) => m.payload.key,
    on: {
      Rename: [{ from: 'Open', to: 'Open', then: (d, p) => ({ data: { ...d, name: p.name } }) }],
      Label: [{ from: 'Open', to: 'Open', then: (d) => ({ data: { ...d, labelledAt: new Date() } }) }],
      Freeze: [
        {
          from: 'Open',
          to: 'Frozen',
          then: () => ({ emit: [{ type: 'Frozen', destination: 'audit', payload: {} }] }),
        },
      ],
    },
    operatorInputs: { SetName: z.object({ name: z.string() }) },
    operatorCommands: {
      SetName: { from: ['Open', 'Frozen'], to: 'Open', then: (d, i) => ({ data: { ...d, name: i.name } }) },
    },
  });
}

/**
 * Issue 13, item 7: a transition could store data that fails the process's own schema; every later
 * message then threw `state_undecodable` and nothing could repair the instance. The new data is
 * checked (as it will be read back) before anything is written; a refusal is a failure of that
 * message under the quarantine rules, and the instance stays decodable.
 */
describe(`a transition cannot store state its process's schema refuses (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const m = (type: 'Rename' | 'Label' | 'Freeze', key: string, extra: Record<string, unknown> = {}) => ({
    id: newMessageId(type.toLowerCase()),
    type,
    payload: { key, ...extra },
  });

  async function rowsFor(id: string) {
    const [instance, inbox, outbox, transitions] = await Promise.all([
      db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } }),
      db.prisma.inboxMessage.findMany({ where: { instance_id: id } }),
      db.prisma.outboxMessage.findMany({ where: { source_id: id } }),
      db.prisma.processTransition.findMany({ where: { instance_id: id }, orderBy: { id: 'asc' } }),
    ]);
    return { instance, inbox, outbox, transitions };
  }

  it('quarantine off: the delivery is refused with nothing written, and the next message still applies', async () => {
    const { pm } = processManagerOn(db, { processes: [account()] });
    const key = newOrderId();
    const id = (await pm.deliver('account', m('Rename', key, { name: 'Ada' }))).instanceId!;
    const before = await rowsFor(id);

    for (const bad of [m('Rename', key, { name: '' }), m('Label', key)]) {
      await expect(pm.deliver('account', bad)).rejects.toMatchObject({ code: 'state_invalid' });
      expect(await rowsFor(id)).toEqual(before);
    }
    expect(await pm.find(id)).toMatchObject({ state: { name: 'Ada' }, failure: null });
    expect((await pm.deliver('account', m('Freeze', key))).outcome).toBe('applied');
    expect(await pm.find(id)).toMatchObject({ currentState: 'Frozen', state: { key, name: 'Ada' } });
  });

  it('quarantine on: recorded, then quarantined after the budget; the state still decodes and a release repairs it', async () => {
    const { pm, clock } = processManagerOn(db, {
      processes: [account()],
      config: { quarantine_after_seconds: 60 },
    });
    const key = newOrderId();
    const id = (await pm.deliver('account', m('Rename', key, { name: 'Ada' }))).instanceId!;
    const bad = m('Rename', key, { name: '' });
    await expect(pm.deliver('account', bad)).rejects.toMatchObject({ code: 'state_invalid' });
    expect(await pm.find(id)).toMatchObject({
      status: 'ACTIVE',
      state: { name: 'Ada' },
      failure: { redeliveryKey: bad.id, errorType: 'EngineError:state_invalid' },
    });
    clock.advance(60_000);
    expect((await pm.deliver('account', bad)).outcome).toBe('quarantined');
    expect(await pm.find(id)).toMatchObject({ status: 'QUARANTINED', state: { name: 'Ada' } });

    // Retrying it would store the same refused state: the release fails and changes nothing.
    const quarantined = await rowsFor(id);
    await expect(pm.release(id, { mode: 'retry', operator: 'ops', reason: 'try again' })).rejects.toMatchObject({
      code: 'release_failed',
      message: expect.stringContaining('data schema') as unknown,
    });
    expect(await rowsFor(id)).toEqual(quarantined);

    // Skipping it repairs the instance: it decodes and moves on.
    await pm.release(id, { mode: 'skip', operator: 'ops', reason: 'empty name' });
    expect((await pm.deliver('account', m('Freeze', key))).outcome).toBe('applied');
    expect(await pm.find(id)).toMatchObject({ status: 'ACTIVE', currentState: 'Frozen', state: { name: 'Ada' } });
  });

  it('a kept message whose transition would store refused state quarantines the instance again on it', async () => {
    const { pm, clock } = processManagerOn(db, {
      processes: [account()],
      config: { quarantine_after_seconds: 60 },
    });
    const key = newOrderId();
    const id = (await pm.deliver('account', m('Rename', key, { name: 'Ada' }))).instanceId!;
    const first = m('Rename', key, { name: '' });
    await expect(pm.deliver('account', first)).rejects.toMatchObject({ code: 'state_invalid' });
    clock.advance(60_000);
    expect((await pm.deliver('account', first)).outcome).toBe('quarantined');
    const kept = m('Label', key);
    expect((await pm.deliver('account', kept)).outcome).toBe('skipped_quarantined');
    const r = await pm.release(id, { mode: 'skip', operator: 'ops', reason: 'empty name' });
    expect(r.stoppedOn).toMatchObject({ messageId: kept.id, errorType: 'EngineError:state_invalid' });
    expect(await pm.find(id)).toMatchObject({ status: 'QUARANTINED', state: { name: 'Ada' } });
  });

  it('an operator command that would store refused state is refused (preview too), writing nothing', async () => {
    const { pm } = processManagerOn(db, { processes: [account()] });
    const key = newOrderId();
    const id = (await pm.deliver('account', m('Rename', key, { name: 'Ada' }))).instanceId!;
    const before = await rowsFor(id);
    const cmd = {
      command: 'SetName',
      input: { name: '' },
      expectedState: 'Open',
      operator: 'ops@example.com',
      reason: 'clear the name',
      idempotencyKey: newMessageId('k'),
    };
    await expect(pm.previewOperatorCommand('account', id, cmd)).rejects.toMatchObject({ code: 'state_invalid' });
    await expect(pm.runOperatorCommand('account', id, cmd)).rejects.toMatchObject({ code: 'state_invalid' });
    expect(await rowsFor(id)).toEqual(before);
    // A valid one goes through.
    expect(
      await pm.runOperatorCommand('account', id, { ...cmd, input: { name: 'Grace' }, idempotencyKey: 'k2' }),
    ).toMatchObject({ outcome: 'applied' });
    expect(await pm.find(id)).toMatchObject({ state: { name: 'Grace' } });
  });

  it('an instance is never created with initial data its schema refuses, not even to hold a failure record', async () => {
    const broken = defineProcess({
      name: 'broken-initial',
      states: ['Open', 'Closed'],
      initial: 'Open',
      final: ['Closed'],
      data: z.object({ key: z.string(), name: z.string().min(1) }),
      initialData: (key) => ({ key, name: '' }),
      messages: { Open: z.object({ key: z.string() }) },
      correlate: (msg) => msg.payload.key,
      on: { Open: [{ from: 'Open', to: 'Open' }] },
    });
    const { pm } = processManagerOn(db, { processes: [broken], config: { quarantine_after_seconds: 60 } });
    const key = newOrderId();
    await expect(
      pm.deliver('broken-initial', { id: newMessageId('open'), type: 'Open', payload: { key } }),
    ).rejects.toMatchObject({ code: 'state_invalid' });
    expect(await db.prisma.sagaInstance.count({ where: { process_name: 'broken-initial' } })).toBe(0);
  });
});
