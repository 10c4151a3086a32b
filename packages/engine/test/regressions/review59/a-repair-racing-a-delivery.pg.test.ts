import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RepairCommand } from '../../../src/index.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import {
  finalStates,
  fulfil,
  operatorTable,
  rowsOf,
  shipLateMs,
  table,
  type MessageType,
} from './support/fulfil-model.ts';

/**
 * Review 59 (PostgreSQL: two replicas on one server, each on its own connections). An operator's repair
 * drafted against the state the console showed, applied by one replica while another replica delivers
 * a message to the same instance. ADR 0008/0016: both go through the instance's row lock, so the result
 * is one of the two serial orders: either the message moved the instance first and the repair is a
 * conflict (its expected state or version no longer holds), or the repair applied first and the
 * message met the state it left. Never both applied from the same state, one move in the history
 * each, one outbox row per applied send, one audit row.
 */
const paths: Record<string, MessageType[]> = {
  Reserving: ['Paid'],
  Booking: ['Paid', 'Reserved'],
  Refunding: ['Paid', 'Rejected'],
  ManualReview: ['Paid', 'Rejected', 'RefundFailed'],
};
type Repair = { kind: 'force'; to: string } | { kind: 'command'; name: 'RetryShipment' | 'AcceptRefund' };
const repairArb: fc.Arbitrary<Repair> = fc.oneof(
  fc.record({ kind: fc.constant('force' as const), to: fc.constantFrom(...fulfil.states) }),
  fc.record({
    kind: fc.constant('command' as const),
    name: fc.constantFrom('RetryShipment' as const, 'AcceptRefund' as const),
  }),
);

/** What a repair does alone from `state`: its target state, or why it is refused. */
function repairFrom(state: string, r: Repair): { to: string } | { refused: true } {
  if (finalStates.includes(state)) return { refused: true };
  if (r.kind === 'force') return { to: r.to };
  const spec = operatorTable[r.name]!;
  return spec.from.includes(state) ? { to: spec.to } : { refused: true };
}

describe('review 59: a repair racing a delivery on another replica (postgres)', () => {
  let t!: Awaited<ReturnType<typeof openTestEngine>>;
  let b!: TestEngine;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [], actions: [], processes: [fulfil] });
    b = await createTestEngine({ db: t.db, clock: t.clock, flows: [], actions: [], processes: [fulfil] });
  });
  afterAll(async () => {
    await b?.close();
    await t?.closeAll();
  });

  it('the outcome is one of the two serial orders, and the rows agree with it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(paths)),
        fc.constantFrom<MessageType>('Paid', 'Reserved', 'Rejected', 'Booked', 'RefundDone', 'RefundFailed'),
        repairArb,
        async (start, type, repair) => {
          const key = `r59-race-${randomUUID().slice(0, 8)}`;
          const msg = (ty: MessageType, id: string) => ({
            id: `${key}-${id}`,
            type: ty,
            payload: { key, tag: `${key}-${id}` },
          });
          let id = '';
          for (const [i, ty] of paths[start]!.entries())
            id = (await t.engine.processes.deliver(fulfil, msg(ty, `p${i}`))).instanceId!;
          const before = await rowsOf(t.db, id);
          const version = (await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } })).version;
          const cmd = {
            ...(repair.kind === 'force'
              ? { kind: 'instance.force_transition', to: repair.to }
              : { kind: 'instance.command', command: repair.name, input: { tag: `${key}-op` } }),
            target: { instanceId: id },
            expected: { state: start, version },
            actor: 'r59@example.test',
            reason: 'review 59 race',
            idempotencyKey: `r59-${randomUUID()}`,
          } as RepairCommand;

          const [delivered, repaired] = await Promise.all([
            b.engine.processes.deliver(fulfil, msg(type, 'raced')).then((r) => r.outcome),
            t.engine.repairs.apply(cmd).then(
              () => 'applied',
              (e: unknown) => (e as { code?: string }).code ?? String(e),
            ),
          ]);
          const after = await rowsOf(t.db, id);
          const seen = `${start}: ${type} -> ${delivered}, ${JSON.stringify(repair)} -> ${repaired}`;

          // The two serial orders.
          const dTo = table[type]![start];
          const orderA = {
            // The message first: if it moved the instance, the repair's expectation no longer holds.
            delivered: dTo ? 'applied' : 'ignored',
            repaired: dTo ? 'repair_conflict' : 'refused' in repairFrom(start, repair) ? 'repair_refused' : 'applied',
            state:
              dTo ?? ('to' in repairFrom(start, repair) ? (repairFrom(start, repair) as { to: string }).to : start),
          };
          const r = repairFrom(start, repair);
          const mid = 'to' in r ? r.to : start;
          const dTo2 = finalStates.includes(mid) ? undefined : table[type]![mid];
          const orderB = {
            repaired: 'to' in r ? 'applied' : 'repair_refused',
            delivered: dTo2 ? 'applied' : 'ignored',
            state: dTo2 ?? mid,
          };
          const got = { delivered, repaired, state: after.inst!.current_state };
          expect(
            [orderA, orderB].map((o) => JSON.stringify(o, Object.keys(got).sort())),
            seen,
          ).toContain(JSON.stringify(got, Object.keys(got).sort()));
          // The rows: a chain of moves from the state before, one outbox row per applied send, one audit row.
          const moves = after.history
            .slice(before.history.length)
            .filter((h) => h.outcome === 'applied' || h.outcome === 'repair');
          let at = start;
          for (const h of moves) {
            expect(h.from_state, seen).toBe(at);
            at = h.to_state;
          }
          expect(at, seen).toBe(after.inst!.current_state);
          const sends =
            (delivered === 'applied' ? 1 : 0) + (repaired === 'applied' && repair.kind === 'command' ? 1 : 0);
          expect(after.outbox.length - before.outbox.length, seen).toBe(sends);
          expect(after.repairs.length, seen).toBe(1);
          expect(after.inst!.status, seen).toBe(
            finalStates.includes(after.inst!.current_state) ? 'COMPLETED' : 'ACTIVE',
          );
        },
      ),
      { numRuns: Number(process.env.R59_RUNS ?? 60), endOnFailure: true },
    );
  }, 120_000);

  it('a forced transition racing the due deadline sweep on another replica: one serial order, the deadline fired once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fulfil.states), async (to) => {
        const key = `r59-tmo-${randomUUID().slice(0, 8)}`;
        const msg = (ty: MessageType, id: string) => ({
          id: `${key}-${id}`,
          type: ty,
          payload: { key, tag: `${key}-${id}` },
        });
        const id = (await t.engine.processes.deliver(fulfil, msg('Paid', 'p'))).instanceId!;
        await t.engine.processes.deliver(fulfil, msg('Reserved', 'r'));
        t.clock.advance(shipLateMs + 1000);
        const before = await rowsOf(t.db, id);
        const version = (await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } })).version;
        const cmd = {
          kind: 'instance.force_transition',
          to,
          target: { instanceId: id },
          expected: { state: 'Booking', version },
          actor: 'r59@example.test',
          reason: 'review 59 race',
          idempotencyKey: `r59-${randomUUID()}`,
        } as RepairCommand;
        const [, repaired] = await Promise.all([
          b.engine.processes.sweepProcessTimeouts(),
          t.engine.repairs.apply(cmd).then(
            () => 'applied',
            (e: unknown) => (e as { code?: string }).code ?? String(e),
          ),
        ]);
        // Another pass: whatever the first left due is delivered now.
        await b.engine.processes.sweepProcessTimeouts();
        const after = await rowsOf(t.db, id);
        const timer = after.history.filter((h) => h.message_type === 'ShipLate');
        const got = {
          repaired,
          state: after.inst!.current_state,
          timer: timer.map((h) => h.outcome),
          timeoutRow: after.timeouts.map((x) => x.status),
          sends: after.outbox.length - before.outbox.length,
        };
        const timerFirst = {
          repaired: 'repair_conflict',
          state: 'Refunding',
          timer: ['applied'],
          timeoutRow: ['Delivered'],
          sends: 1,
        };
        const repairFirst =
          to === 'Booking'
            ? { repaired: 'applied', state: 'Refunding', timer: ['applied'], timeoutRow: ['Delivered'], sends: 1 }
            : { repaired: 'applied', state: to, timer: ['ignored'], timeoutRow: ['Delivered'], sends: 0 };
        expect([timerFirst, repairFirst], `force to ${to}`).toContainEqual(got);
      }),
      { numRuns: Number(process.env.R59_RUNS ?? 30), endOnFailure: true },
    );
  }, 120_000);
});
