import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { fulfil, rowsOf, shipLateMs, timerFault } from './support/fulfil-model.ts';

/**
 * Review 59, from the model test's failing-timeout commands. ADR 0127: a failing timeout backs off (up
 * to `timeout_retry_max_seconds`, an hour by default) and shows as the instance's `failingTimeout`;
 * "An operator in a hurry can still move the instance with an operator command or a forced transition."
 * ADR 0012: a timeout belongs to the state visit that armed it; once the instance left that visit it is
 * stale, "a recorded no-op", whatever its handler would do (seed 004: "a stale timeout is a harmless
 * no-op").
 *
 * The shipment deadline of an order fires and its handler fails (the payments client is down). The
 * on-call operator does what ADR 0127 says: forces the order on to `Compensated` (COMPLETED). The
 * deadline can no longer fail or act: its visit is over. Is the finished order still shown as failing?
 */
describe(`review 59: a repaired instance stops showing its stale failing timeout (${testDbKind()})`, () => {
  let t!: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [],
      actions: [],
      processes: [fulfil],
      config: { processes: { timeout_retry_seconds: 60, timeout_retry_max_seconds: 3600 } },
    });
  });
  afterEach(() => {
    timerFault.broken = false;
  });
  afterAll(async () => {
    await t?.closeAll();
  });

  it('after a forced transition out of the timeout’s state, the instance is not listed as failing on it', async () => {
    const key = `r59-${randomUUID().slice(0, 8)}`;
    const pm = t.engine.processes;
    const msg = (id: string, type: string) => ({ id: `${key}-${id}`, type, payload: { key, tag: `${key}-${id}` } });
    const id = (await pm.deliver(fulfil, msg('paid', 'Paid'))).instanceId!;
    await pm.deliver(fulfil, msg('reserved', 'Reserved'));
    timerFault.broken = true;
    t.clock.advance(shipLateMs + 1000);
    expect(await pm.sweepProcessTimeouts()).toMatchObject({ delivered: 0, failed: 1 });
    // The client stays down for a while: each retry fails, the backoff doubles to its hourly cap.
    for (let attempt = 2; attempt <= 7; attempt++) {
      const retryAt = (await pm.find(id))!.failingTimeout!.nextRetryAt!;
      t.clock.set(new Date(retryAt.getTime() + 1000));
      expect(await pm.sweepProcessTimeouts()).toMatchObject({ delivered: 0, failed: 1 });
    }
    const failing = (await pm.find(id))!.failingTimeout!;
    expect({ name: failing.name, attempts: failing.attempts }).toEqual({ name: 'ShipLate', attempts: 7 });
    expect(failing.nextRetryAt!.getTime() - t.clock.now().getTime()).toBe(3600_000);

    const version = (await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id } })).version;
    await t.engine.repairs.apply({
      kind: 'instance.force_transition',
      to: 'Compensated',
      target: { instanceId: id },
      expected: { state: 'Booking', version },
      actor: 'r59@example.test',
      reason: 'review 59: refunded by hand while the payments client is down',
      idempotencyKey: `r59-${randomUUID()}`,
    });
    // A pass of the scheduler right after the repair (the timer's retry is not due yet).
    await pm.sweepProcessTimeouts();

    const view = await pm.find(id);
    const listedCompleted = (
      await pm.findByStatus('COMPLETED', new Date(8.64e15), 1000, { processName: fulfil.name })
    ).find((x) => x.id === id);
    const rows = await rowsOf(t.db, id);
    expect({
      status: view?.status,
      state: view?.currentState,
      failingTimeout: view?.failingTimeout ?? null,
      listedFailingTimeout: listedCompleted?.failingTimeout ?? null,
    }).toEqual({ status: 'COMPLETED', state: 'Compensated', failingTimeout: null, listedFailingTimeout: null });
    // What is left of the timeout is a no-op: it is not a live deadline any more.
    expect(rows.inst!.next_timer_due_at).toBeNull();
  });
});
