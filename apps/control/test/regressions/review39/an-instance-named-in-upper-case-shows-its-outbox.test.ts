import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { fulfilmentProcess } from '../../../src/demo/fulfilment-process.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';
import { type apiClient, signedInClient, testDatabaseUrl } from '../../support/test-plane.ts';

/**
 * Review 39. ADR 0102: ids are kept in lower case, and an id given in upper case is the same id.
 * `instances.get` accepts an upper-case uuid and finds the instance (the engine lower-cases it), but
 * reads the instance's outbox rows with the id as given: `outbox.source_id` is text holding the
 * lower-case id, so the page shows the instance with NO commands sent. An operator who followed a
 * link or pasted an id from a tool that prints uuids in upper case concludes that the process never
 * queued its ReserveInventory: seed 004's repair starts from "load the process state, last message,
 * outbox records".
 */
describe('an instance read by its id in upper case (PostgreSQL)', () => {
  let plane: ControlPlane;
  let api: ReturnType<typeof apiClient>;
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: await testDatabaseUrl('review39_upper_case_id'),
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
      }),
    );
    api = await signedInClient(plane, 'viewer');
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('shows the same outbox rows as the same id in lower case', async () => {
    const orderId = randomUUID();
    const paid = await plane.engine.processes.deliver(fulfilmentProcess, {
      id: `pay-${orderId}`,
      type: 'PaymentCaptured',
      payload: { orderId, paymentId: `pay-${orderId}` },
    });
    const id = paid.instanceId ?? '';
    const lower = await api.instances.get.query({ id });
    expect(lower.outbox.map((o) => o.type)).toContain('ReserveInventory');

    const upper = await api.instances.get.query({ id: id.toUpperCase() });
    expect(upper.instance.id).toBe(id);
    expect(upper.outbox.map((o) => o.id)).toEqual(lower.outbox.map((o) => o.id));
  });
});
