import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countHistoryByTag, countOrphanRows } from '../../src/testing/count-history.ts';
import { openTestEngine } from '../support/open-test-engine.ts';
import { testDbKind } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';
import { seedRetentionScene } from './retention-fixture.ts';

describe(`retention on a schedule (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [],
      actions: [],
      config: { retention: { enabled: true, interval_seconds: 1, older_than_seconds: 30 * 86_400, batch_size: 4 } },
    });
    await seedRetentionScene(t.db.driver, t.clock.now());
  });
  afterAll(async () => {
    await t.engine.retention.stop();
    await t.closeAll();
  });

  it('the lease holder prunes what the settings allow, and lets the lease go between passes', async () => {
    const before = await countHistoryByTag(t.db.driver);
    expect(before['flow_runs:old-done']).toBe(24);
    t.engine.retention.start();
    t.engine.retention.start(); // idempotent: one schedule
    await waitFor('the scheduled prune to finish', async () => {
      const left = await t.engine.retention.preview();
      return left.total === 0 ? true : undefined;
    });
    await t.engine.retention.stop();
    const after = await countHistoryByTag(t.db.driver);
    expect(after['flow_runs:old-done']).toBeUndefined();
    expect(after['flow_runs:new-done']).toBe(before['flow_runs:new-done']);
    expect(after['process_transitions:quarantined']).toBe(before['process_transitions:quarantined']);
    expect(await countOrphanRows(t.db.driver)).toBe(0);
    expect(await t.db.prisma.lease.count({ where: { name: 'retention' } })).toBe(0);
  });
});
