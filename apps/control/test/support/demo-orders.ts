import { randomUUID } from 'node:crypto';
import { roll, serviceOdds } from '../../src/demo/fulfilment-services.ts';

/** An order id the simulated services answer the way `want` says (their answers are fixed per order). */
export function orderWhere(want: (id: string) => boolean): string {
  for (;;) {
    const id = randomUUID();
    if (want(id)) return id;
  }
}

/** The inventory service reserves stock for this order (rather than rejecting it). */
export const reserved = (id: string) => roll(id, 'inventory') >= serviceOdds.inventoryRejects;
/** The carrier books this order's shipment at once (rather than staying silent). */
export const booked = (id: string) => roll(id, 'carrier') >= serviceOdds.carrierSilent;
/** The payment provider completes this order's refund (rather than declining it). */
export const refunded = (id: string) => roll(id, 'refund') >= serviceOdds.refundFails;
