import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';
import { recordOf } from '../review20/record.ts';
import { childrenOf, runDueWakes } from '../review23/support/sibling-children.ts';
import { anomaliesOf } from '../review24/support/late-flows.ts';
import { startCutProxy } from './support/cut-proxy.ts';
import { killFlows } from './support/kill-flows.ts';

const workerScript = fileURLToPath(new URL('./support/kill-worker.ts', import.meta.url));

/**
 * Review 27, attack 4 (ADR 0010's consequences, ADR 0093 decision 1), a real worker process on PostgreSQL
 * behind a TCP proxy the test cuts. The worker replays the parent `Promise.all([ctx.child(A), ctx.action(side)])`
 * and parks on A (which waits for a signal) while `side` runs. The proxy is cut (the database unreachable
 * for the worker); `side` ends; its late write fails and is retried (the worker logs it). The worker is
 * SIGKILLed while it holds that write. This process then recovers: the dead worker counts as gone (its row
 * marked stopped, as `dead_after_seconds` without a beat would), the step is reclaimed and run again here.
 *
 * Guarantees: the step's outcome is recorded once (attempt 2, written here); `side` ran once per recorded
 * attempt (once in the worker, once here); the parent ends once, Completed, nothing after its end.
 */
describe('SIGKILL of a worker holding a late write through an outage (real PostgreSQL, real process)', () => {
  const suite = childWorkerSuite();

  it('the late write dies with its worker; the step is reclaimed, run again and recorded once', async () => {
    const { db } = suite;
    const proxy = await startCutProxy(suite.url);
    suite.onClose(() => proxy.close());
    const child = await suite.spawn(workerScript, { url: proxy.url });

    const ranHere: string[] = [];
    const flows = killFlows(
      (name) => ranHere.push(name),
      () => Promise.resolve(),
    );
    const e = bareEngine(db, { flows: flows.flows, actions: flows.actions });
    const { runId } = await e.startFlow(flows.parent, null);
    // The worker's replay started A and parked on it while `side` runs.
    await child.printed(/^ran side$/m);
    const a = await waitFor('A to exist', async () => (await childrenOf(db, runId))[0]);
    await waitFor('the parent to park', async () => {
      const p = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      return p.status === 'Waiting' ? true : undefined;
    });
    const row = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 3 } });
    expect([row.status, row.attempts, row.claimed_by]).toEqual(['Running', 1, child.workerId]);

    // The outage: the worker's connections are cut. `side` ends; its late write fails and is retried.
    proxy.cut();
    child.say();
    await child.printed(/writing step outcomes failed; trying again/);
    await child.kill();
    proxy.restore();
    const afterKill = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: row.id } });

    // Recovery: the worker is gone; the step is reclaimed; A gets its signal; every wake is followed.
    await db.prisma.worker.update({ where: { id: child.workerId }, data: { stopped_at: new Date() } });
    expect(await e.reclaimStep(runId, { stepId: row.id })).toEqual({ reclaimed: true, stepId: row.id });
    await e.signal(a.id, 'go', 'ok');
    await runDueWakes(db, e, runId);
    const rec = await recordOf(db, runId);
    const aRec = await recordOf(db, a.id);
    const sideRow = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: row.id } });
    expect({
      afterKill: [afterKill.status, afterKill.attempts],
      side: [sideRow.status, sideRow.attempts, sideRow.claimed_by],
      parent: [rec.run.status, rec.ends, rec.afterTheEnd],
      child: [aRec.run.status, aRec.ends, aRec.afterTheEnd],
      duplicates: rec.duplicateStepOutcomes,
      ranInWorker: (child.output().match(/^ran side$/gm) ?? []).length,
      ranHere: ranHere.filter((n) => n === 'side').length,
      anomalies: (await anomaliesOf(db, runId)).filter((x) => !x.startsWith('claim_lost#')),
    }).toEqual({
      afterKill: ['Running', 1],
      side: ['Completed', 2, e.runtime.workerId],
      parent: ['Completed', 1, []],
      child: ['Completed', 1, []],
      duplicates: [],
      ranInWorker: 1,
      ranHere: 1,
      anomalies: [],
    });
  });
});
