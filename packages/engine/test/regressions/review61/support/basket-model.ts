import { z } from 'zod';
import { defineProcess } from '../../../../src/index.ts';

/**
 * Review 61: a small basket process (seed 004's shape). `AddItem` keeps the basket Open (a
 * self-transition) and sends `ReserveItem` for the item; `Close` completes it and sends `ChargeCard`;
 * `Cancel` moves an open basket to Cancelling (sends `RefundPayment`), where `RefundDone` completes it.
 * `Open` arms the `CloseIdle` deadline (1 h) on entry from `Start`. While `addFault.broken`, `AddItem`'s
 * handler throws (a downstream client down): the poison message of a quarantine; an item `poison` always throws.
 */
export const basketName = 'r61-basket';
export const idleMs = 3600_000;
export const addFault = { broken: false };
export const idleFault = { broken: false };

const key = z.object({ key: z.string() });
const item = z.object({ key: z.string(), sku: z.string() });

/** The basket's data, and (for a second deployment) the schema a later version requires. */
export const basketData = z.object({ key: z.string(), items: z.array(z.string()) });

export function basketProcess(data: z.ZodType<{ key: string; items: string[] }> = basketData) {
  return defineProcess({
    name: basketName,
    states: ['New', 'Open', 'Cancelling', 'Closed', 'Refunded', 'Expired'],
    initial: 'New',
    final: ['Closed', 'Refunded', 'Expired'],
    data,
    initialData: (k) => ({ key: k, items: [] }),
    messages: { Start: key, AddItem: item, Close: key, Cancel: key, RefundDone: key },
    correlate: (m) => m.payload.key,
    timeouts: { CloseIdle: { afterMs: idleMs, expects: 'Open' } },
    compensating: { Cancelling: ['Refunded'] },
    on: {
      Start: [{ from: 'New', to: 'Open', schedule: ['CloseIdle'] }],
      AddItem: [
        {
          from: 'Open',
          to: 'Open',
          then: (d, p) => {
            if (addFault.broken) throw new Error('r61 fault: the inventory client is down');
            if (p.sku === 'poison') throw new Error('r61 fault: the inventory service refuses this item');
            return {
              data: { ...d, items: [...d.items, p.sku] },
              emit: [{ type: 'ReserveItem', destination: 'inventory', payload: { key: d.key, sku: p.sku } }],
            };
          },
        },
      ],
      Close: [
        {
          from: 'Open',
          to: 'Closed',
          then: (d) => ({ data: d, emit: [{ type: 'ChargeCard', destination: 'payments', payload: { key: d.key } }] }),
        },
      ],
      Cancel: [
        {
          from: 'Open',
          to: 'Cancelling',
          then: (d) => ({
            data: d,
            emit: [{ type: 'RefundPayment', destination: 'payments', payload: { key: d.key } }],
          }),
        },
      ],
      RefundDone: [{ from: 'Cancelling', to: 'Refunded' }],
      CloseIdle: [
        {
          from: 'Open',
          to: 'Expired',
          then: (d) => {
            if (idleFault.broken) throw new Error('r61 timer fault: the payments client is down');
            return { data: d };
          },
        },
      ],
    },
  });
}

export const basket = basketProcess();
