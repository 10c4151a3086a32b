import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineProcess, EngineError, type RepairCommand } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';

/**
 * Review 39. Seed 004's repair: "choose a typed action such as retry shipment, accept a late booking,
 * or request refund; submit it with the expected process state, operator identity, reason, and a new
 * idempotency key; pass it through the same lock, state transition, and outbox transaction". ADR 0016:
 * a command the target cannot take is `repair_refused` with its blockers and an audit row saying so;
 * one idempotency key, one decision, and a key reused for another command is `invalid_input` on
 * `idempotencyKey`.
 */
const broken = { refund: true };
const fulfilment = defineProcess({
  name: 'review39-fulfilment',
  states: ['Booking', 'Refunding', 'Shipped', 'Refunded'],
  initial: 'Booking',
  final: ['Shipped', 'Refunded'],
  data: z.object({ key: z.string(), notes: z.array(z.string()) }),
  initialData: (key) => ({ key, notes: [] }),
  messages: { Opened: z.object({ key: z.string() }) },
  correlate: (m) => m.payload.key,
  on: { Opened: [{ from: 'Booking', to: 'Booking' }] },
  operatorInputs: { RequestRefund: z.object({ amount: z.number() }), RetryShipment: z.object({ carrier: z.string() }) },
  operatorCommands: {
    RequestRefund: {
      from: ['Booking'],
      to: 'Refunding',
      then: (d, input) => {
        if (broken.refund) throw new Error('the refund provider client is not configured');
        return {
          data: { ...d, notes: [...d.notes, `refund ${input.amount}`] },
          emit: [{ type: 'RefundPayment', destination: 'payments', payload: { key: d.key, amount: input.amount } }],
        };
      },
    },
    RetryShipment: {
      from: ['Booking'],
      to: 'Booking',
      then: (d, input) => ({
        data: { ...d, notes: [...d.notes, `retry with ${input.carrier}`] },
        emit: [{ type: 'BookShipment', destination: 'shipping', payload: { key: d.key, carrier: input.carrier } }],
      }),
    },
  },
});

describe(`operator commands through engine.repairs (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [], actions: [], processes: [fulfilment] });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  async function booking() {
    const key = `o-${randomUUID().slice(0, 8)}`;
    await t.engine.processes.deliver(fulfilment, { id: `open-${key}`, type: 'Opened', payload: { key } });
    const row = await t.db.prisma.sagaInstance.findFirstOrThrow({
      where: { process_name: fulfilment.name, correlation_key: key },
    });
    return { id: row.id, state: row.current_state, version: row.version };
  }
  const command = (i: { id: string; state: string; version: number }, extra: object) =>
    ({
      kind: 'instance.command',
      target: { instanceId: i.id },
      expected: { state: i.state, version: i.version },
      actor: 'ops@example.test',
      reason: 'review 39',
      idempotencyKey: randomUUID(),
      ...extra,
    }) as RepairCommand;

  it('a command whose own code throws is refused with the reason, audited, and nothing changes', async () => {
    broken.refund = true;
    const i = await booking();
    const cmd = command(i, { command: 'RequestRefund', input: { amount: 12 } });
    const preview = await t.engine.repairs.preview(cmd).then(
      (p) => ({ applicable: p.applicable, blockers: p.blockers }),
      (err: unknown) => ({ threw: err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err) }),
    );
    const applied = await t.engine.repairs.apply(cmd).then(
      () => null,
      (err: unknown) => err,
    );
    const audit = await t.db.prisma.repairCommand.findMany({ where: { idempotency_key: cmd.idempotencyKey } });
    const row = await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id: i.id } });
    expect(row).toMatchObject({ current_state: 'Booking', version: i.version });
    // As a release whose retry still fails: a blocker naming the cause, not an exception.
    expect.soft(preview).toMatchObject({ applicable: false, blockers: [expect.stringMatching(/not configured/)] });
    expect.soft(audit.map((a) => a.status)).toEqual(['refused']);
    expect(applied).toBeInstanceOf(EngineError);
    expect((applied as EngineError).code).toBe('repair_refused');
    expect((applied as EngineError).message).toMatch(/not configured/);
  });

  it('one idempotency key on one instance is one operator command: another command under it is refused', async () => {
    const i = await booking();
    const first = command(i, { command: 'RetryShipment', input: { carrier: 'dhl' } });
    expect(await t.engine.repairs.apply(first)).toMatchObject({ status: 'applied', replayed: false });

    broken.refund = false;
    const now = await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id: i.id } });
    const second = command(
      { id: i.id, state: now.current_state, version: now.version },
      { command: 'RequestRefund', input: { amount: 12 }, idempotencyKey: first.idempotencyKey },
    );
    const outcome = await t.engine.repairs.apply(second).then(
      (r) => ({ replayed: r.replayed, status: r.status }),
      (err: unknown) => err,
    );
    // The refund was neither applied nor refused: the operator is told it was done.
    const after = await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id: i.id } });
    expect.soft(after.current_state).toBe('Booking');
    expect(outcome).toMatchObject({ code: 'invalid_input', field: 'idempotencyKey' });
  });

  it('runOperatorCommand: a key already used for another command on the instance is not answered "duplicate"', async () => {
    broken.refund = false;
    const i = await booking();
    const who = { operator: 'ops@example.test', reason: 'review 39', idempotencyKey: randomUUID() };
    expect(
      await t.engine.processes.runOperatorCommand(fulfilment, i.id, {
        command: 'RetryShipment',
        input: { carrier: 'dhl' },
        expectedState: 'Booking',
        ...who,
      }),
    ).toMatchObject({ outcome: 'applied' });
    const refund = await t.engine.processes
      .runOperatorCommand(fulfilment, i.id, {
        command: 'RequestRefund',
        input: { amount: 12 },
        expectedState: 'Booking',
        ...who,
      })
      .then(
        (r) => r,
        (err: unknown) => err,
      );
    const after = await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id: i.id } });
    expect.soft(after.current_state).toBe('Booking');
    // "duplicate" tells the operator this refund was already made; it never was.
    expect(refund).not.toMatchObject({ outcome: 'duplicate' });
  });
});
