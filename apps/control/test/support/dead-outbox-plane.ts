import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fulfilmentProcess } from '../../src/demo/fulfilment-process.ts';
import { parseEnv } from '../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../src/start-control-plane.ts';
import { apiClient, testDatabaseUrl } from './test-plane.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The inventory service's webhook: down (503) until the test brings it up; keeps the message ids it took. */
export interface Inventory {
  server: Server;
  url: string;
  up: { now: boolean };
  got: string[];
}

function startInventory(): Promise<Inventory> {
  const got: string[] = [];
  const up = { now: false };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (!up.now) return res.writeHead(503).end('inventory is down');
      got.push(String(req.headers['x-sagaflow-message-id']));
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, up, got }),
    ),
  );
}

/**
 * A control plane whose outbox sends `demo.inventory` to a real webhook (`inventory`), one attempt per
 * row (a failed publish is Dead at once), polled every 20 ms: what the requeue suites draft against.
 */
export async function startDeadOutboxPlane(label: string): Promise<{ plane: ControlPlane; inventory: Inventory }> {
  const inventory = await startInventory();
  const plane = await startControlPlane(
    parseEnv({
      DATABASE_URL: await testDatabaseUrl(label),
      CONTROL_PORT: '0',
      LOG_LEVEL: 'silent',
      SAGAFLOW_ENGINE_CONFIG: JSON.stringify({ outbox: { max_attempts: 1, poll_interval_ms: 20 } }),
      SAGAFLOW_OUTBOX_ROUTES: JSON.stringify({
        'demo.inventory': { kind: 'webhook', url: inventory.url, secret: `${label}-secret`, timeout_ms: 2000 },
      }),
    }),
  );
  return { plane, inventory };
}

/** The instance's ReserveInventory row as its page shows it, once the publisher has brought it to `status`. */
export async function reserveRowOf(plane: ControlPlane, viewerCookie: string, instanceId: string, status: string) {
  for (let i = 0; i < 400; i++) {
    const d = await apiClient(plane.url, viewerCookie).instances.get.query({ id: instanceId });
    const row = d.outbox.find((o) => o.type === 'ReserveInventory');
    if (row?.status === status) return row;
    await sleep(25);
  }
  throw new Error(`ReserveInventory of ${instanceId} never became ${status}`);
}

/** An order whose ReserveInventory died while the inventory service was down. */
export async function deadOrder(plane: ControlPlane, inventory: Inventory, viewerCookie: string) {
  inventory.up.now = false;
  const orderId = randomUUID();
  const r = await plane.engine.processes.deliver(fulfilmentProcess, {
    id: `payment-${orderId}`,
    type: 'PaymentCaptured',
    payload: { orderId, paymentId: 'PAY-1' },
  });
  return { instanceId: r.instanceId!, row: await reserveRowOf(plane, viewerCookie, r.instanceId!, 'Dead') };
}
