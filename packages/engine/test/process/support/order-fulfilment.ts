export {
  orderFulfilmentProcess as orderFulfilment,
  PoisonNoteError,
  twoHours,
} from '../../../src/testing/order-fulfilment.ts';
