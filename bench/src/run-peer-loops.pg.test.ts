import { createDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { describe, expect, inject, it } from 'vitest';
import { prepareTemplateDatabase } from './prepare-template-database.ts';
import { runPeerLoops, type PeerLoopsSpec } from './run-peer-loops.ts';

describe('runPeerLoops', () => {
  it("runs a phase's warm-up and measured loop in a child and reads the server at both edges of the measured one", async () => {
    const adminUrl = inject('pgAdminUrl');
    const template = uniqueDatabaseName('loops_template');
    await prepareTemplateDatabase(adminUrl, template);
    const url = await createDatabase(adminUrl, uniqueDatabaseName('loops'), { template });
    const spec: PeerLoopsSpec = {
      system: 'Sagaflow',
      notify: true,
      url,
      concurrency: 2,
      // No time for the warm-ups: the first one runs its 30 flows, the second none.
      warmupMs: 0,
      warmupFlows: 30,
      measureMs: 500,
    };
    const edges: number[] = [];
    const loops = await runPeerLoops(spec, async () => void edges.push(performance.now()));
    expect(edges).toHaveLength(2);
    expect(loops.warmup.flows).toBe(30);
    expect(loops.loop.flows).toBeGreaterThan(0);
    expect(loops.loop.latenciesMs).toHaveLength(loops.loop.flows);
    // The measured loop ran between the edges: the span the two reads enclose covers its window.
    expect(edges[1]! - edges[0]!).toBeGreaterThanOrEqual(loops.loop.windowMs);
    expect(loops.nodeMs).toBeGreaterThan(0);
    expect(loops.poolCounters?.jobsClaimed).toBeGreaterThanOrEqual(0);
  });

  it('fails naming the system when its process exits before it sent its loops', async () => {
    const url = `${inject('pgAdminUrl').replace(/\/[^/]*$/, '')}/${uniqueDatabaseName('never_created')}`;
    const spec: PeerLoopsSpec = {
      system: 'Sagaflow',
      notify: true,
      url,
      concurrency: 1,
      warmupMs: 100,
      warmupFlows: 0,
      measureMs: 100,
    };
    let edges = 0;
    await expect(runPeerLoops(spec, async () => void (edges += 1))).rejects.toThrow(
      /the Sagaflow phase's process \d+ exited \(code 1\) before it sent its loops/,
    );
    expect(edges).toBe(0);
  });
});
