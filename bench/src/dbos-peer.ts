import { DBOS } from '@dbos-inc/dbos-sdk';
import { createDatabase } from '@sagaflow/test-postgres';
import type { OpenPeer, PeerSystem } from './peer-system.ts';
import { spareConnections } from './peer-system.ts';
import { waitForNoSessions } from './read-database-counters.ts';

async function noop(n: number, step: number): Promise<{ n: number; step: number }> {
  return Promise.resolve({ n, step });
}

let threeSteps: ((n: number) => Promise<{ n: number; step: number }>) | undefined;

/**
 * The same flow as Sagaflow's bench flow: three sequential no-op steps, each checkpointed by DBOS.
 * DBOS is a process-wide singleton and wants its workflows registered before the first launch, so
 * this registers once, lazily, and every later launch reuses the registration.
 */
function benchWorkflow(): (n: number) => Promise<{ n: number; step: number }> {
  threeSteps ??= DBOS.registerWorkflow(
    async (n: number) => {
      const first = await DBOS.runStep(() => noop(n, 1), { name: 'noop1' });
      const second = await DBOS.runStep(() => noop(first.n, 2), { name: 'noop2' });
      return DBOS.runStep(() => noop(second.n, 3), { name: 'noop3' });
    },
    { name: 'bench.three-steps' },
  );
  return threeSteps;
}

async function launch(url: string, poolSize: number): Promise<void> {
  DBOS.setConfig({
    name: 'sagaflow-bench',
    applicationVersion: 'bench-1',
    systemDatabaseUrl: url,
    systemDatabasePoolSize: poolSize,
    logLevel: 'error',
  });
  await DBOS.launch();
}

/**
 * DBOS Transact as the comparison drives it: DBOS launched on the phase's own database (its system
 * database: DBOS keeps workflow state there), and a flow run by calling the registered workflow,
 * which returns once its last step and its result are checkpointed. That is DBOS's documented way to
 * run a workflow durably in-process; no queue is involved, as none is on Sagaflow's side either
 * beyond its own job table.
 */
export const dbosPeer: PeerSystem = {
  name: 'DBOS',
  async prepareTemplate(adminUrl, name) {
    benchWorkflow();
    // Launching migrates the system database; shut down at once, it is only cloned from.
    await launch(await createDatabase(adminUrl, name), 2);
    await DBOS.shutdown();
    await waitForNoSessions(adminUrl, name);
  },
  async open(url, concurrency): Promise<OpenPeer> {
    const workflow = benchWorkflow();
    await launch(url, concurrency + spareConnections);
    return {
      async runOne(n) {
        const out = await workflow(n);
        if (out.step !== 3 || out.n !== n) throw new Error(`DBOS workflow ${n} returned ${JSON.stringify(out)}`);
      },
      close: () => DBOS.shutdown(),
    };
  },
};
