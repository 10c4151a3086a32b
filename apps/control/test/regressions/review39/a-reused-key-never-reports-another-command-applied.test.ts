import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { fulfilmentProcess } from '../../../src/demo/fulfilment-process.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';
import { type apiClient, signedInClient, testDatabaseUrl } from '../../support/test-plane.ts';

/**
 * Review 39. Seed 004's repair is a typed action (retry the refund, accept a late booking) submitted
 * with a new idempotency key; ADR 0016: "one idempotency key, one decision … a key reused for another
 * command or target is invalid_input on idempotencyKey". Over HTTP, an operator whose console or CLI
 * reuses a key for ANOTHER operator command on the same instance is told that command was applied
 * (`replayed: true`), while the instance never moved.
 */
describe('the instance.command repair over HTTP (PostgreSQL)', () => {
  let plane: ControlPlane;
  let api: ReturnType<typeof apiClient>;
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: await testDatabaseUrl('review39_reused_key'),
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
      }),
    );
    api = await signedInClient(plane, 'operator');
  });
  afterAll(async () => {
    await plane.stop();
  });

  const deliver = (type: string, payload: Record<string, unknown>) =>
    plane.engine.processes.deliver(fulfilmentProcess, { id: `${type}-${randomUUID()}`, type, payload });
  const at = async (id: string) => {
    const i = await plane.engine.processes.find(id);
    return { state: i?.currentState ?? 'gone', version: i?.version ?? -1 };
  };

  it('AcceptLateBooking under the key RetryRefund used is refused naming idempotencyKey, not answered as applied', async () => {
    const orderId = randomUUID();
    const paid = await deliver('PaymentCaptured', { orderId, paymentId: `pay-${orderId}` });
    const id = paid.instanceId ?? '';
    await deliver('InventoryRejected', { orderId, reason: 'out of stock' });
    await deliver('RefundFailed', { orderId, reason: 'card expired' });
    expect((await at(id)).state).toBe('ManualReview');

    const key = randomUUID();
    const draft = (command: string, input: object, expected: { state: string; version: number }) => ({
      kind: 'instance.command',
      target: { instanceId: id },
      expected,
      reason: 'the customer called',
      idempotencyKey: key,
      command,
      input,
    });
    const retry = await api.repairs.applyOne.mutate(draft('RetryRefund', {}, await at(id)));
    expect(retry).toMatchObject({ status: 'applied', replayed: false });
    // The refund fails again: back in ManualReview, where the operator now keeps the late shipment.
    await deliver('RefundFailed', { orderId, reason: 'card expired again' });
    const now = await at(id);
    expect(now.state).toBe('ManualReview');

    const accept = await api.repairs.applyOne.mutate(draft('AcceptLateBooking', { shipmentId: 'ship-42' }, now)).then(
      (r) => r as unknown,
      (err: unknown) => ({
        httpStatus: (err as { data?: { httpStatus?: number } }).data?.httpStatus,
        field: (err as { data?: { field?: string } }).data?.field,
      }),
    );
    // The order was not completed; the answer must not say the command was applied.
    expect.soft((await at(id)).state).toBe('ManualReview');
    expect(accept).toMatchObject({ httpStatus: 400, field: 'input.idempotencyKey' });
  });
});
