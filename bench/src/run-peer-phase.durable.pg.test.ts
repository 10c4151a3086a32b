import { describe, expect, it } from 'vitest';
import { prepareTemplateDatabase } from './prepare-template-database.ts';
import { runPeerPhase, type PeerPhasePlan } from './run-peer-phase.ts';
import { sagaflowPeer } from './sagaflow-peer.ts';
import { startBenchCluster } from './start-bench-cluster.ts';
import { withDurableServer } from './with-durable-server.ts';

const template = 'wal_template';

/** A short phase of Sagaflow at one client on `adminUrl`, on a clone of the template made there. */
async function phaseAtOneClient(adminUrl: string, dataDir: string, mode: PeerPhasePlan['mode'], round: number) {
  return runPeerPhase(sagaflowPeer(), {
    adminUrl,
    dataDir,
    statementsEnabled: true,
    mode,
    round,
    concurrency: 1,
    warmupMs: 300,
    warmupFlows: 0,
    measureMs: 600,
    template,
    notify: true,
  });
}

describe('runPeerPhase on the bench cluster', () => {
  // Its own cluster: the durable server restarts it, which the suite's shared one must never see.
  it('counts the WAL flushes a one-client flow waits for, and their time, with durable commits only', async () => {
    const { cluster, statements } = await startBenchCluster();
    try {
      expect(statements).toEqual({ enabled: true });
      await prepareTemplateDatabase(cluster.adminUrl, template);
      const durable = await withDurableServer(cluster, () =>
        phaseAtOneClient(cluster.adminUrl, cluster.dataDir, 'durable', 1),
      );
      expect(durable.flows).toBeGreaterThan(0);
      // One client commits 4 times per flow in sequence (ADR 0073) and each durable commit flushes the
      // WAL itself, unless the WAL writer flushed it first: well above 3 per flow either way.
      expect(durable.walSyncsPerFlow).toBeGreaterThan(3);
      expect(durable.walSyncsPerFlow).toBeLessThan(durable.commitsPerFlow + 1);
      // Timed (track_wal_io_timing, set by the bench cluster): a flush takes some time, and not seconds.
      expect(durable.walSyncMs).toBeGreaterThan(0);
      expect(durable.walSyncMs).toBeLessThan(1000);
      expect(durable.executorMsPerFlow).toBeGreaterThan(0);

      // The same cluster as the tests run it: fsync off, so no commit waits for a flush.
      const fsyncOff = await phaseAtOneClient(cluster.adminUrl, cluster.dataDir, 'fsync-off', 2);
      expect(fsyncOff.flows).toBeGreaterThan(0);
      expect(fsyncOff.walSyncsPerFlow).toBe(0);
      expect(fsyncOff.walSyncMs).toBeNull();
    } finally {
      await cluster.stop();
    }
  });
});
