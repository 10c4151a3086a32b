// The child process of a-deliverer-and-a-publisher-sigkilled.pg.test.ts, on the database in argv[2].
// It (1) delivers `reserved-<key>` (InventoryReserved) to the one instance whose key starts with
// `r29-kill-`, and stops inside that delivery's transaction right after its outbox insert, printing
// `in-tx <message id>`; and (2) runs one outbox pass whose transport never acknowledges, printing
// `publishing <message id>` for each row it was handed. Then it waits to be SIGKILLed.
import { pino } from 'pino';
import { createDatabase, createProcessManager, publishOutboxBatch } from '../../../../src/index.ts';
import { orderFulfilmentProcess } from '../../../../src/testing/order-fulfilment.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: kill-process-worker.ts <database url>');
const logger = pino({ level: 'silent' });
const db = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
const forever = () => new Promise<never>(() => undefined);
const pm = createProcessManager({
  db,
  processes: [orderFulfilmentProcess()],
  logger,
  faults: {
    afterOutbox: (_tx, { messageId }) => {
      process.stdout.write(`in-tx ${messageId}\n`);
      return forever();
    },
  },
});
process.stdout.write('ready kill-process-worker\n');

const [instance] = (await pm.findByStatus('ACTIVE', new Date('2100-01-01'), 100)).filter((i) =>
  i.correlationKey.startsWith('r29-kill-'),
);
if (!instance) throw new Error('no r29-kill- instance to deliver to');
const key = instance.correlationKey;
void pm.deliver('order-fulfilment', {
  id: `reserved-${key}`,
  type: 'InventoryReserved',
  payload: { orderId: key, reservationId: `res-${key}` },
});
void publishOutboxBatch({
  db,
  logger,
  routes: {
    inventory: {
      kind: 'in-process',
      publish: (m) => {
        process.stdout.write(`publishing ${m.messageId}\n`);
        return forever();
      },
    },
  },
});
