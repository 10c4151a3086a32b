import { uniqueDatabaseName } from '@sagaflow/test-postgres';
import { describe, expect, inject, it } from 'vitest';
import { floorPeer } from './floor-peer.ts';
import { prepareTemplateDatabase } from './prepare-template-database.ts';
import { runPeerPhase } from './run-peer-phase.ts';
import { sagaflowPeer } from './sagaflow-peer.ts';
import { withPgClient } from './with-pg-client.ts';

const requestedCheckpoints = (adminUrl: string) =>
  withPgClient(adminUrl, async (c) =>
    Number((await c.query<{ n: string }>('select checkpoints_req as n from pg_stat_bgwriter')).rows[0]!.n),
  );

describe('runPeerPhase', () => {
  it('measures on a clone made right before a checkpoint and leaves nothing of it behind for autovacuum (ADR 0075)', async () => {
    const adminUrl = inject('pgAdminUrl');
    const template = uniqueDatabaseName('phase_template');
    await prepareTemplateDatabase(adminUrl, template);
    const checkpointsBefore = await requestedCheckpoints(adminUrl);
    // A round no bench uses, so no other file's phase has this database name.
    const result = await runPeerPhase(sagaflowPeer(), {
      adminUrl,
      // No cluster data directory here: PostgreSQL's CPU reads as unknown, the rest is measured.
      dataDir: '/nonexistent',
      statementsEnabled: false,
      mode: 'fsync-off',
      round: 17,
      concurrency: 2,
      warmupMs: 200,
      warmupFlows: 0,
      measureMs: 400,
      template,
      notify: true,
    });
    expect(result.flows).toBeGreaterThan(0);
    expect(result.commitsPerFlow).toBeGreaterThan(0);
    const left = await withPgClient(
      adminUrl,
      async (c) => (await c.query('select 1 from pg_database where datname = $1', [result.database])).rowCount,
    );
    expect(left).toBe(0);
    expect(await requestedCheckpoints(adminUrl)).toBeGreaterThan(checkpointsBefore);
  });

  it('runs the floor (ADR 0090): four commits per flow, each of them a write', async () => {
    const adminUrl = inject('pgAdminUrl');
    const template = uniqueDatabaseName('floor_template');
    await floorPeer.prepareTemplate(adminUrl, template);
    const result = await runPeerPhase(floorPeer, {
      adminUrl,
      dataDir: '/nonexistent',
      statementsEnabled: false,
      mode: 'fsync-off',
      round: 18,
      concurrency: 1,
      warmupMs: 200,
      warmupFlows: 50,
      measureMs: 400,
      template,
      notify: true,
    });
    expect(result.system).toBe('Floor');
    expect(result.flows).toBeGreaterThan(0);
    // Commits cover warm-up and measured flows; the harness's own reads add a few.
    expect(result.commitsPerFlow).toBeGreaterThanOrEqual(4);
    expect(result.commitsPerFlow).toBeLessThan(4.5);
    expect(result.writeTransactionsPerFlow).toBeGreaterThanOrEqual(3.9);
    expect(result.writeTransactionsPerFlow).toBeLessThan(4.2);
  });
});
