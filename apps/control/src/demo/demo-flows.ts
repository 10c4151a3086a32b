import { festivalOrderFlow, packMerch } from './festival-order-flow.ts';
import { fulfilmentProcess } from './fulfilment-process.ts';
import { chargeCard, orderFlow, reserveStock, shipOrder } from './order-flow.ts';
import { pickLine, pickListFlow } from './pick-list-flow.ts';
import { reservationActions, reservationFlow } from './reservation-flow.ts';
import { ticketActions, ticketFlow } from './ticket-flow.ts';
import { tripActions, tripFlow } from './trip-flow.ts';

/** Every demo definition the control plane registers: flows, their actions, process managers. */
export const demoFlows = [orderFlow, tripFlow, reservationFlow, festivalOrderFlow, ticketFlow, pickListFlow];
export const demoActions = [
  chargeCard,
  reserveStock,
  shipOrder,
  ...tripActions,
  ...reservationActions,
  packMerch,
  ...ticketActions,
  pickLine,
];
export const demoProcesses = [fulfilmentProcess];
