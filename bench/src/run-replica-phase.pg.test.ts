import { uniqueDatabaseName } from '@sagaflow/test-postgres';
import { describe, expect, inject, it } from 'vitest';
import { createObserverRole } from './observer-role.ts';
import { prepareTemplateDatabase } from './prepare-template-database.ts';
import { runReplicaPhase } from './run-replica-phase.ts';

describe('runReplicaPhase', () => {
  it('a starter process keeps the backlog fed and its counts open the window: runs finish in the worker process', async () => {
    const adminUrl = inject('pgAdminUrl');
    // One role per cluster: another file may have made it already.
    await createObserverRole(adminUrl).catch((error: unknown) => {
      if (!String(error).includes('already exists')) throw error;
    });
    const template = uniqueDatabaseName('replicas_template');
    await prepareTemplateDatabase(adminUrl, template);
    const result = await runReplicaPhase({
      adminUrl,
      template,
      // No cluster data directory here: PostgreSQL's CPU reads as unknown, the rest is measured.
      dataDir: '/nonexistent',
      processes: 1,
      concurrencyPerProcess: 2,
      backlog: 6,
      starters: 1,
      warmupMs: 200,
      measureMs: 800,
    });
    expect(result.flows).toBeGreaterThan(0);
    expect(result.workerErrors).toBe(0);
    // Read from the starter's counts during the window: never more open runs than it keeps.
    expect(result.minOpen).toBeGreaterThanOrEqual(0);
    expect(result.minOpen).toBeLessThanOrEqual(6);
    expect(result.cores.starter).toBeGreaterThan(0);
    expect(result.cores.postgres).toBeNull();
  }, 120_000);
});
