import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { basket, basketProcess, idleMs } from './support/basket-model.ts';

/**
 * Review 61, on ADR 0134 §5: "Only a Pending timeout that has failed and still belongs to its instance's
 * current visit is shown failing … A stale one is a no-op by ADR 0012, and it is delivered so at its next
 * try." ADR 0127: a failing timeout shows as the instance's `failingTimeout`, in the lists, the overview
 * and /metrics, so an operator finds it. ADR 0008/0012: an instance whose stored state no longer decodes
 * fails every delivery (`state_undecodable`) and must be repaired.
 *
 * Timeouts are never cancelled (ADR 0008), so an instance that left a state keeps its stale timer Pending
 * until it comes due. A new deployment changes the data schema so that the stored state no longer decodes
 * (a required field added without a default). The stale timer comes due: its delivery decodes the state
 * before it can judge the timer stale, so it fails, at every try, for ever. Is the instance shown failing?
 */
describe(`review 61: a stale timeout failing on an undecodable instance is shown failing (${testDbKind()})`, () => {
  let t!: Awaited<ReturnType<typeof openTestEngine>>;
  let v2!: TestEngine;
  beforeAll(async () => {
    const processes = { timeout_retry_seconds: 60, timeout_retry_max_seconds: 3600 };
    t = await openTestEngine({ flows: [], actions: [], processes: [basket], config: { processes } });
    // The next deployment: the basket's data now requires a currency (added without a default).
    const v2Basket = basketProcess(z.object({ key: z.string(), items: z.array(z.string()), currency: z.string() }));
    v2 = await createTestEngine({
      db: t.db,
      clock: t.clock,
      flows: [],
      actions: [],
      processes: [v2Basket],
      config: { processes },
    });
  });
  afterAll(async () => {
    await v2?.close();
    await t?.closeAll();
  });

  it('the instance whose stale deadline fails at every try is listed as failing', async () => {
    const key = `r61-${randomUUID().slice(0, 8)}`;
    const id = (await t.engine.processes.deliver(basket, { id: `${key}-start`, type: 'Start', payload: { key } }))
      .instanceId!;
    // The customer cancels: Open → Cancelling. CloseIdle (armed in Open) is now stale, still Pending.
    expect(
      (await t.engine.processes.deliver(basket, { id: `${key}-cancel`, type: 'Cancel', payload: { key } })).outcome,
    ).toBe('applied');

    // After the new deployment, the stale deadline comes due and is tried twice.
    const pm = v2.engine.processes;
    t.clock.advance(idleMs + 1000);
    expect(await pm.sweepProcessTimeouts()).toMatchObject({ delivered: 0, failed: 1 });
    const [first] = await t.db.prisma.$queryRawUnsafe<{ retry_at: Date }[]>(
      `select retry_at from "sagaflow"."process_timeouts" where instance_id = $1::uuid`,
      id,
    );
    t.clock.set(new Date(first!.retry_at.getTime() + 1000));
    expect(await pm.sweepProcessTimeouts()).toMatchObject({ delivered: 0, failed: 1 });
    const timers = await t.db.prisma.$queryRawUnsafe<{ status: string; attempts: number; last_error: string }[]>(
      `select status, attempts, last_error from "sagaflow"."process_timeouts" where instance_id = $1::uuid`,
      id,
    );
    // Not a no-op at its next try: it failed again, and will at every try after.
    expect(timers).toEqual([
      { status: 'Pending', attempts: 2, last_error: expect.stringMatching(/no longer decodes/) as unknown },
    ]);

    const found = (await pm.find(id))!;
    const listed = (await pm.findByStatus('ACTIVE', new Date(t.clock.now().getTime() + 60_000), 100)).find(
      (i) => i.id === id,
    )!;
    // Nothing else says this instance is broken: no failure record, no message has failed.
    expect({ status: found.status, failure: found.failure }).toEqual({ status: 'ACTIVE', failure: null });
    expect({
      find: found.failingTimeout?.attempts ?? null,
      findByStatus: listed.failingTimeout?.attempts ?? null,
    }).toEqual({ find: 2, findByStatus: 2 });
  });
});
