import { z } from 'zod';
import type { Database } from '../../../../src/db/database.ts';
import { defineProcess } from '../../../../src/index.ts';

/**
 * Review 59: seed 004's fulfilment process, small. Every applied message, timeout and operator command
 * appends its tag to `log`, and each emits one command (its payload names the tag), so an effect
 * applied twice shows in the data, the history and the outbox.
 */
export const processName = 'r59-fulfil';
export const shipLateMs = 2 * 3600_000;
/** While `broken`, a live ShipLate's handler throws (a failing timeout, ADR 0127). */
export const timerFault = { broken: false };

const msg = z.object({ key: z.string(), tag: z.string() });
type D = { key: string; log: string[] };
const add = (d: D, tag: string, type: string) => ({
  data: { ...d, log: [...d.log, tag] },
  emit: [{ type, destination: 'r59', payload: { key: d.key, tag } }],
});

export const fulfil = defineProcess({
  name: processName,
  states: ['Awaiting', 'Reserving', 'Booking', 'Refunding', 'ManualReview', 'Done', 'Compensated'],
  initial: 'Awaiting',
  final: ['Done', 'Compensated'],
  data: z.object({ key: z.string(), log: z.array(z.string()) }),
  initialData: (key) => ({ key, log: [] }),
  messages: {
    Paid: msg,
    Reserved: msg,
    Rejected: msg,
    Booked: msg,
    RefundDone: msg,
    RefundFailed: msg,
    /** A poison message: its handler throws in every state that accepts it (the non-final ones). */
    Glitch: msg,
  },
  correlate: (m) => m.payload.key,
  timeouts: { ShipLate: { afterMs: shipLateMs, expects: 'Booking' } },
  compensating: { Refunding: ['Compensated', 'ManualReview'] },
  on: {
    Paid: [{ from: 'Awaiting', to: 'Reserving', then: (d, p) => add(d, p.tag, 'ReserveInventory') }],
    Reserved: [
      { from: 'Reserving', to: 'Booking', schedule: ['ShipLate'], then: (d, p) => add(d, p.tag, 'BookShipment') },
    ],
    Rejected: [{ from: 'Reserving', to: 'Refunding', then: (d, p) => add(d, p.tag, 'RefundPayment') }],
    Booked: [
      { from: 'Booking', to: 'Done', then: (d, p) => add(d, p.tag, 'NotifyCustomer') },
      { from: 'Refunding', to: 'ManualReview', late: true, then: (d, p) => add(d, p.tag, 'InterceptParcel') },
    ],
    RefundDone: [{ from: 'Refunding', to: 'Compensated', then: (d, p) => add(d, p.tag, 'CloseOrder') }],
    RefundFailed: [{ from: 'Refunding', to: 'ManualReview', then: (d, p) => add(d, p.tag, 'PageOperator') }],
    ShipLate: [
      {
        from: 'Booking',
        to: 'Refunding',
        then: (d) => {
          if (timerFault.broken) throw new Error('r59 timer fault: the payments client is down');
          return add(d, 'timeout', 'RefundPayment');
        },
      },
    ],
    Glitch: (['Reserving', 'Booking', 'Refunding', 'ManualReview'] as const).map((from) => ({
      from,
      to: from,
      then: (): never => {
        throw new Error('r59 glitch: the downstream client is not configured');
      },
    })),
  },
  operatorInputs: { RetryShipment: z.object({ tag: z.string() }), AcceptRefund: z.object({ tag: z.string() }) },
  operatorCommands: {
    RetryShipment: {
      from: ['ManualReview'],
      to: 'Booking',
      then: (d, i) => ({ ...add(d, i.tag, 'BookShipment'), schedule: [{ name: 'ShipLate' }] }),
    },
    AcceptRefund: {
      from: ['ManualReview', 'Refunding'],
      to: 'Compensated',
      then: (d, i) => add(d, i.tag, 'CloseOrder'),
    },
  },
});

export type MessageType = 'Paid' | 'Reserved' | 'Rejected' | 'Booked' | 'RefundDone' | 'RefundFailed' | 'Glitch';
export const finalStates = ['Done', 'Compensated'];

/** The reference model's transition table (message → from → to), as the definition above. */
export const table: Record<string, Record<string, string>> = {
  Paid: { Awaiting: 'Reserving' },
  Reserved: { Reserving: 'Booking' },
  Rejected: { Reserving: 'Refunding' },
  Booked: { Booking: 'Done', Refunding: 'ManualReview' },
  RefundDone: { Refunding: 'Compensated' },
  RefundFailed: { Refunding: 'ManualReview' },
  ShipLate: { Booking: 'Refunding' },
  Glitch: {},
};
export const operatorTable: Record<string, { from: string[]; to: string }> = {
  RetryShipment: { from: ['ManualReview'], to: 'Booking' },
  AcceptRefund: { from: ['ManualReview', 'Refunding'], to: 'Compensated' },
};

export interface ModelTimer {
  armedVisit: number;
  dueAt: number;
  fired: boolean;
  /** It failed (its handler threw) and has not fired since. */
  failed?: boolean;
}
export interface ModelInstance {
  id: string | null;
  key: string;
  state: string;
  visit: number;
  log: string[];
  /** Outbox rows each applied tag (message id / operator key / timeout) caused. */
  outbox: number;
  timers: ModelTimer[];
  appliedRepairs: number;
  status: 'ACTIVE' | 'COMPLETED' | 'QUARANTINED';
  failure: { id: string; firstFailedAt: number } | null;
  /** Messages skipped while quarantined, in arrival order (with repeats). */
  kept: { id: string; type: MessageType }[];
  appliedTimeouts: number;
  staleTimeouts: number;
}

/** What the database holds for one instance. */
export async function rowsOf(db: Database, instanceId: string) {
  const q = async <R>(sql: string, args: unknown[]) => await db.prisma.$queryRawUnsafe<R[]>(sql, ...args);
  const [inst] = await q<{
    current_state: string;
    status: string;
    state_visit: number;
    state: { log: string[] };
    next_timer_due_at: Date | null;
    failure_redelivery_key: string | null;
  }>(
    `select current_state, status, state_visit, state, next_timer_due_at, failure_redelivery_key from "sagaflow"."saga_instances" where id = $1::uuid`,
    [instanceId],
  );
  const history = await q<{
    from_state: string;
    to_state: string;
    outcome: string;
    message_id: string;
    message_type: string;
  }>(
    `select from_state, to_state, outcome, message_id, message_type from "sagaflow"."process_transitions"
      where instance_id = $1::uuid order by id`,
    [instanceId],
  );
  const outbox = await q<{ message_id: string; type: string; tag: string }>(
    `select message_id, type, payload->>'tag' as tag from "sagaflow"."outbox" where source_id = $1 order by seq`,
    [instanceId],
  );
  const timeouts = await q<{ status: string; armed_visit: number; attempts: number; last_error: string | null }>(
    `select status, armed_visit, attempts, last_error from "sagaflow"."process_timeouts" where instance_id = $1::uuid`,
    [instanceId],
  );
  const repairs = await q<{ command: string; status: string; idempotency_key: string }>(
    `select command, status, idempotency_key from "sagaflow"."repair_commands" where target_id = $1`,
    [instanceId],
  );
  return { inst, history, outbox, timeouts, repairs };
}
