import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from './support/open-test-engine.ts';

const heartbeatMs = 200;
const idleMs = 2_000;

/**
 * What an idle engine costs its database in writes: on PGlite the transaction-id counter is this
 * process's alone, so its delta counts every writing transaction the engine made. A worker pool that
 * has nothing to do writes its heartbeat (ADR 0010) and nothing else: its claims, one per poll, lease
 * nothing and take no transaction id (ADR 0060). With the defaults (heartbeat every 5 s) that is 12
 * writes a minute.
 */
describe('an idle worker pool writes one transaction per heartbeat and none per poll (pglite)', () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [],
      actions: [],
      config: { worker: { heartbeat_interval_ms: heartbeatMs, poll_interval_ms: 10 } },
    });
  });
  afterAll(async () => {
    await t.engine.stopWorkers(2_000);
    await t.closeAll();
  });

  const nextXid = async () =>
    Number((await t.db.driver.query<{ x: string }>('select pg_snapshot_xmax(pg_current_snapshot())::text as x'))[0]!.x);

  it(`over ${idleMs} ms with a ${heartbeatMs} ms heartbeat and a 10 ms poll: at most one write per beat`, async () => {
    t.engine.startWorkers();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = await nextXid();
    const polls = t.engine.workerCounters()!.claims;
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const writes = (await nextXid()) - before;
    // The loop did poll (so a poll that wrote would show), and the beats did run.
    expect(t.engine.workerCounters()!.claims - polls).toBeGreaterThan(idleMs / heartbeatMs);
    expect(writes).toBeGreaterThan(0);
    expect(writes).toBeLessThanOrEqual(idleMs / heartbeatMs + 1);
  });
});
