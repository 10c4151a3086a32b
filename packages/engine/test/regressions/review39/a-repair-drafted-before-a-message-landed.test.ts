import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineProcess, EngineError, type RepairCommand } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';

/**
 * Review 39 (held). Seed 004: "If the expected state changed during investigation, reject the repair
 * and start again." The state name alone is not what the operator saw: here a message lands between
 * the draft and the apply and leaves the instance in the SAME state with other data (Booking →
 * Booking, the carrier changed), and another leaves it and comes back (Booking → Hold → Booking). Both
 * drafts must be refused as conflicts (expected.version), change nothing, and leave their audit row.
 */
const shipping = defineProcess({
  name: 'review39-aba',
  states: ['Booking', 'Hold', 'Shipped'],
  initial: 'Booking',
  final: ['Shipped'],
  data: z.object({ key: z.string(), carrier: z.string() }),
  initialData: (key) => ({ key, carrier: 'none' }),
  messages: {
    CarrierChosen: z.object({ key: z.string(), carrier: z.string() }),
    Held: z.object({ key: z.string() }),
    Unheld: z.object({ key: z.string() }),
  },
  correlate: (m) => m.payload.key,
  on: {
    CarrierChosen: [{ from: 'Booking', to: 'Booking', then: (d, p) => ({ data: { ...d, carrier: p.carrier } }) }],
    Held: [{ from: 'Booking', to: 'Hold' }],
    Unheld: [{ from: 'Hold', to: 'Booking' }],
  },
  operatorInputs: { BookWith: z.object({ carrier: z.string() }) },
  operatorCommands: {
    BookWith: {
      from: ['Booking'],
      to: 'Booking',
      then: (d, input) => ({
        data: { ...d, carrier: input.carrier },
        emit: [{ type: 'BookShipment', destination: 'shipping', payload: { key: d.key, carrier: input.carrier } }],
      }),
    },
  },
});

describe(`a repair drafted before a message landed (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [], actions: [], processes: [shipping] });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  const send = (type: string, payload: object) =>
    t.engine.processes.deliver(shipping, { id: `${type}-${randomUUID()}`, type, payload });

  for (const moves of [['CarrierChosen'], ['Held', 'Unheld']]) {
    it(`after ${moves.join(' then ')}, the draft is a conflict on expected.version and nothing changes`, async () => {
      const key = `k-${randomUUID().slice(0, 8)}`;
      const id = (await send('CarrierChosen', { key, carrier: 'dhl' })).instanceId!;
      const seen = await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } });
      const draft = {
        kind: 'instance.command',
        target: { instanceId: id },
        expected: { state: seen.current_state, version: seen.version },
        actor: 'ops@example.test',
        reason: 'carrier keeps failing',
        idempotencyKey: randomUUID(),
        command: 'BookWith',
        input: { carrier: 'ups' },
      } as RepairCommand;
      expect(await t.engine.repairs.preview(draft)).toMatchObject({ expectedHolds: true, applicable: true });

      for (const type of moves) await send(type, { key, carrier: 'fedex' });
      const before = await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } });
      expect(before.current_state).toBe('Booking');

      const err = await t.engine.repairs.apply(draft).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(EngineError);
      expect(err).toMatchObject({ code: 'repair_conflict', field: 'expected.version' });
      expect(await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } })).toEqual(before);
      expect(await t.db.prisma.outboxMessage.count({ where: { source_id: id } })).toBe(0);
      const audit = await t.db.prisma.repairCommand.findMany({ where: { idempotency_key: draft.idempotencyKey } });
      expect(audit.map((a) => a.status)).toEqual(['conflict']);
    });
  }
});
