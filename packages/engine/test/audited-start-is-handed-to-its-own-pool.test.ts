import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';
import { actions, flows, switches, waiter } from './repairs/support/repair-fixtures.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

/**
 * ADR 0107 addendum: a start with an `audit` callback (the control plane's `runs.start`) commits the
 * run and its trail row in one operator transaction, and is handed to this process's pool like any
 * start (ADR 0029): its wake is written leased to this worker and the pool runs it once the transaction
 * commits, with no poll or NOTIFY between. A start whose audit fails gives its slot back.
 */
describe(`an audited start runs in its own process's pool (${testDbKind()})`, () => {
  let t: T;
  beforeAll(async () => {
    switches.variant = 'a';
    t = await openTestEngine({ flows, actions });
    t.engine.startWorkers();
  });
  afterAll(async () => {
    await t.closeAll();
  });

  const counters = () => {
    const c = t.engine.workerCounters();
    if (!c) throw new Error('no worker pool');
    return c;
  };
  const audited = (key: string) =>
    t.engine.startFlow(waiter, null, {
      businessKey: key,
      audit: (tx, started) =>
        tx.auditEvent
          .create({
            data: {
              at: new Date(),
              actor: 'ana',
              action: 'run_started',
              target_id: started.runId,
              outcome: 'ok',
              details: {},
            },
          })
          .then(() => undefined),
    });

  const parked = (runId: string) =>
    waitFor('the run to park on its signal', async () => {
      const d = await t.engine.getRun(runId);
      return d?.run.waitingFor?.startsWith('signal') ? d : undefined;
    });

  /**
   * Audited starts, one at a time, until the pool takes one at once (a pool may refuse a hand-off:
   * every slot taken, a wake queued first, a loop late reading the queue; ADR 0060), each parked
   * before the next. Returns how the first one handed over went, or null if none was.
   */
  async function firstHandedOver(tries: number) {
    for (let i = 0; i < tries; i++) {
      const before = counters();
      const { runId } = await audited(`handed-${randomUUID()}`);
      const handed = counters().handOffs - before.handOffs === 1;
      await parked(runId);
      if (handed) return { runId, claimsForIt: counters().jobsClaimed - before.jobsClaimed };
    }
    return null;
  }

  it('its wake is leased to this worker in the start and the run reaches its first wait without a claim', async () => {
    const first = await firstHandedOver(20);
    expect(first, JSON.stringify(counters())).not.toBeNull();
    expect(first!.claimsForIt, 'no claim was needed for it').toBe(0);
    expect(await t.db.prisma.auditEvent.count({ where: { target_id: first!.runId, action: 'run_started' } })).toBe(1);
  });

  it('a start whose audit fails leaves no run and gives its slot back', async () => {
    const taken = counters().slotsTaken;
    const key = `refused-${randomUUID()}`;
    await expect(
      t.engine.startFlow(waiter, null, {
        businessKey: key,
        audit: () => Promise.reject(new Error('the audit trail refused the row')),
      }),
    ).rejects.toThrow('the audit trail refused the row');
    expect(await t.db.prisma.flowRun.count({ where: { business_key: key } })).toBe(0);
    expect(counters().slotsTaken).toBe(taken);
    // Audited starts after it are still handed over.
    expect(await firstHandedOver(20), JSON.stringify(counters())).not.toBeNull();
  });
});
