import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { addFault, basket, idleFault, idleMs } from './support/basket-model.ts';

/**
 * Review 61, held, on ADR 0134 §5 ("Only a Pending timeout that has failed and still belongs to its
 * instance's current visit is shown failing"). ADR 0012: a transition to the state the instance is in
 * keeps the visit, so its armed timeouts stay live. ADR 0127: a quarantined instance's timers stay armed.
 * A live failing timeout must not be hidden by a self-transition, nor by the instance's quarantine.
 */
describe(`review 61: a live failing timeout stays shown (${testDbKind()})`, () => {
  let t!: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [],
      actions: [],
      processes: [basket],
      config: {
        processes: {
          timeout_retry_seconds: 60,
          timeout_retry_max_seconds: 3600,
          quarantine_after_seconds: 5,
          store_retry: { max_attempts: 1 },
        },
      },
    });
  });
  afterEach(() => {
    addFault.broken = false;
    idleFault.broken = false;
  });
  afterAll(async () => {
    await t?.closeAll();
  });

  it('after self-transitions and a quarantine, the failing deadline is still shown, everywhere', async () => {
    const key = `r61-${randomUUID().slice(0, 8)}`;
    const pm = t.engine.processes;
    const id = (await pm.deliver(basket, { id: `${key}-start`, type: 'Start', payload: { key } })).instanceId!;
    idleFault.broken = true;
    t.clock.advance(idleMs + 1000);
    expect(await pm.sweepProcessTimeouts()).toMatchObject({ failed: 1 });
    const shown = async () => ({
      find: (await pm.find(id))?.failingTimeout?.name ?? null,
      listed:
        (await pm.findByStatus((await pm.find(id))!.status, new Date(t.clock.now().getTime() + 60_000), 100)).find(
          (i) => i.id === id,
        )?.failingTimeout?.name ?? null,
    });
    expect(await shown()).toEqual({ find: 'CloseIdle', listed: 'CloseIdle' });
    // Items added: Open → Open keeps the visit, so the deadline is still live and still failing.
    for (const n of [1, 2])
      expect(
        (await pm.deliver(basket, { id: `${key}-add-${n}`, type: 'AddItem', payload: { key, sku: `s${n}` } })).outcome,
      ).toBe('applied');
    expect(await shown()).toEqual({ find: 'CloseIdle', listed: 'CloseIdle' });
    // Quarantined on a poison item: its timer stays armed, and still failing.
    addFault.broken = true;
    const poison = { id: `${key}-add-3`, type: 'AddItem', payload: { key, sku: 's3' } };
    await expect(pm.deliver(basket, poison)).rejects.toThrow(/inventory client is down/);
    t.clock.advance(10_000);
    expect((await pm.deliver(basket, poison)).outcome).toBe('quarantined');
    expect((await pm.find(id))!.status).toBe('QUARANTINED');
    expect(await shown()).toEqual({ find: 'CloseIdle', listed: 'CloseIdle' });
  });
});
