import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import type { Database } from '../../../src/db/database.ts';
import {
  createProcessManager,
  type EngineConfigInput,
  type ProcessDefinition,
  type ProcessManager,
} from '../../../src/index.ts';
import type { ProcessFaults } from '../../../src/process/process-deps.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { orderFulfilment } from './order-fulfilment.ts';

export interface ProcessHarness {
  pm: ProcessManager;
  clock: TestClock;
  /** Every wait the store-retry loop asked for, in ms. */
  waits: number[];
}

/** A process manager on `db` with a test clock, quiet logs and no real sleeping between store retries. */
export function processManagerOn(
  db: Database,
  opts: {
    processes?: ProcessDefinition[];
    config?: EngineConfigInput['processes'];
    faults?: ProcessFaults;
    clock?: TestClock;
  } = {},
): ProcessHarness {
  const clock = opts.clock ?? new TestClock(new Date('2026-03-01T10:00:00.000Z'));
  const waits: number[] = [];
  const pm = createProcessManager({
    db,
    processes: opts.processes ?? [orderFulfilment()],
    ...(opts.config ? { config: opts.config } : {}),
    clock,
    logger: pino({ level: 'silent' }),
    faults: opts.faults ?? {},
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  return { pm, clock, waits };
}

export const newOrderId = () => `order-${randomUUID().slice(0, 8)}`;
export const newMessageId = (label: string) => `${label}-${randomUUID().slice(0, 8)}`;

/** Everything the database holds about one order's instance: the rows a guarantee is asserted on. */
export async function rowsOf(db: Database, orderId: string) {
  const instance = await db.prisma.sagaInstance.findUnique({
    where: { process_name_correlation_key: { process_name: 'order-fulfilment', correlation_key: orderId } },
  });
  const id = instance?.id ?? '00000000-0000-0000-0000-000000000000';
  const [outbox, inbox, transitions, timeouts] = await Promise.all([
    db.prisma.outboxMessage.findMany({
      where: { source_id: id },
      orderBy: [{ created_at: 'asc' }, { message_id: 'asc' }],
    }),
    db.prisma.inboxMessage.findMany({ where: { instance_id: id }, orderBy: { received_at: 'asc' } }),
    db.prisma.processTransition.findMany({ where: { instance_id: id }, orderBy: { id: 'asc' } }),
    db.prisma.processTimeout.findMany({ where: { instance_id: id }, orderBy: { due_at: 'asc' } }),
  ]);
  return { instance, outbox, inbox, transitions, timeouts };
}

export const msg = {
  paymentCaptured: (orderId: string, id = newMessageId('pay')) => ({
    id,
    type: 'PaymentCaptured',
    payload: { orderId, paymentId: `pay-${orderId}` },
  }),
  inventoryReserved: (orderId: string, id = newMessageId('res')) => ({
    id,
    type: 'InventoryReserved',
    payload: { orderId, reservationId: `res-${orderId}` },
  }),
  inventoryRejected: (orderId: string, id = newMessageId('rej')) => ({
    id,
    type: 'InventoryRejected',
    payload: { orderId, reason: 'out of stock' },
  }),
  shipmentBooked: (orderId: string, id = newMessageId('ship')) => ({
    id,
    type: 'ShipmentBooked',
    payload: { orderId, shipmentId: `ship-${orderId}` },
  }),
  refundCompleted: (orderId: string, id = newMessageId('refund-ok')) => ({
    id,
    type: 'RefundCompleted',
    payload: { orderId },
  }),
  refundFailed: (orderId: string, id = newMessageId('refund-ko')) => ({
    id,
    type: 'RefundFailed',
    payload: { orderId, reason: 'card expired' },
  }),
  note: (orderId: string, note: string, id = newMessageId('note')) => ({
    id,
    type: 'CustomerNoteAdded',
    payload: { orderId, note },
  }),
};
