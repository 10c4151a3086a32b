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
  let v2Basket!: ReturnType<typeof basketProcess>;
  beforeAll(async () => {
    const processes = { timeout_retry_seconds: 60, timeout_retry_max_seconds: 3600 };
    t = await openTestEngine({ flows: [], actions: [], processes: [basket], config: { processes } });
    // The next deployment: the basket's data now requires a currency (added without a default).
    v2Basket = basketProcess(z.object({ key: z.string(), items: z.array(z.string()), currency: z.string() }));
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

  it('the stale deadline of an instance whose state no longer decodes is delivered as a no-op, not failing at every try', async () => {
    const key = `r61-${randomUUID().slice(0, 8)}`;
    const id = (await t.engine.processes.deliver(basket, { id: `${key}-start`, type: 'Start', payload: { key } }))
      .instanceId!;
    // The customer cancels: Open → Cancelling. CloseIdle (armed in Open) is now stale, still Pending.
    expect(
      (await t.engine.processes.deliver(basket, { id: `${key}-cancel`, type: 'Cancel', payload: { key } })).outcome,
    ).toBe('applied');

    // After the new deployment, the stale deadline comes due.
    const pm = v2.engine.processes;
    t.clock.advance(idleMs + 1000);
    // Fixed (ADR 0134's second addendum): a stale timeout is judged before the state is decoded, so it is
    // delivered as the no-op it is at its first try instead of failing at every try; no failing timeout is
    // left for a read to hide.
    expect(await pm.sweepProcessTimeouts()).toMatchObject({ delivered: 1, failed: 0 });
    const timers = await t.db.prisma.$queryRawUnsafe<{ status: string; attempts: number }[]>(
      `select status, attempts from "sagaflow"."process_timeouts" where instance_id = $1::uuid`,
      id,
    );
    expect(timers.filter((x) => x.status === 'Pending' && x.attempts > 0)).toEqual([]);
    const history = await t.db.prisma.processTransition.findMany({
      where: { instance_id: id, message_type: 'CloseIdle' },
      select: { outcome: true, detail: true },
    });
    expect(history).toEqual([{ outcome: 'ignored', detail: { reason: 'stale_timeout' } }]);

    // The undecodable state is still said to whoever needs it: a message to the instance is refused, naming it.
    await expect(pm.deliver(v2Basket, { id: `${key}-late`, type: 'Cancel', payload: { key } })).rejects.toThrow(
      /no longer decodes/,
    );
    expect((await pm.find(id))!.failingTimeout).toBeNull();
  });
});
