import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { recordOf } from './record.ts';
import { terminateTreeFlows } from './support/terminate-tree-flows.ts';
import { compiledEngineScript, compiledEnv } from '../../support/compiled.ts';

const operatorScript = fileURLToPath(new URL('./support/terminate-operator.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));

/**
 * Review 20. run.terminate reaches a run's open 'propagate' children only AFTER the parent's
 * transaction committed (afterTerminate, the repair's `after`), each in a transaction of its own. A
 * control plane that dies in between (SIGKILLed here once the parent's `run.finished` was emitted,
 * which comes before the children) leaves the child open and running: nothing in the engine finds
 * an open child of a finished parent again. The child is mid-step when it happens.
 *
 * Guarantee attacked: terminate stops the whole tree (its preview lists the child as Terminated;
 * ARCHITECTURE: "terminate" of a run reaches its children); nothing new is claimed for a run whose
 * terminate was applied. Expected: the child ends Terminated (or is at least not driven on to new
 * steps) once the operator's terminate is applied. Observed before ADR 0089: the child claimed and
 * ran its step 2 and ended Completed, its parent step refused (write_refused). Since ADR 0089 the
 * children were terminated in the parent's transaction. Since ADR 0126 (fix 51: a repair's terminate of a
 * tree of thousands outlasted that transaction) the parent's transaction fences them instead (their
 * cleanup window closed, ADR 0125) and they are terminated in batches after it: killed in between, the
 * child is not driven on. Its in-flight step 1 returns and is recorded; its next replay finds the window
 * closed and ends it Cancelled, step two never run. The same command sent again, or a terminate of the
 * run, would have ended it Terminated (fix51/a-terminate-repair-stopped-between-batches.pg.test.ts).
 */
describe('terminate, and the operator dies before the children (real PostgreSQL, real process)', () => {
  let db: Database & { url?: string };
  let operator: ChildProcess | null = null;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    operator?.kill('SIGKILL');
    await db.close();
  });

  it('the child of a terminated parent is not left running', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project (a database URL for the operator process)');
    const ran: string[] = [];
    const one = { reached: gate(), release: gate() };
    const { parent, child, actions } = terminateTreeFlows(async (step) => {
      ran.push(step);
      if (step === 'one') {
        one.reached.open();
        await one.release.promise;
      }
      return step;
    });
    const e = bareEngine(db, { flows: [parent, child], actions });
    const { runId } = await e.startFlow(parent, null);
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    const childRun = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: runId } });
    const liveChild = executeRun(e.runtime, childRun.id);
    await one.reached.promise;

    // The operator's process applies the terminate; once the parent's end committed, it is killed.
    const proc = spawn(process.execPath, [compiledEngineScript(operatorScript), db.url, runId], {
      cwd: repoRoot,
      env: compiledEnv(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    operator = proc;
    let out = '';
    proc.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await waitFor(
      'the parent terminated in the operator process',
      async () => (/committed/.test(out) ? true : undefined),
      60_000,
    );
    proc.kill('SIGKILL');
    await new Promise((r) => proc.once('exit', r));
    operator = null;

    // The child's step 1 returns; whatever is queued for the child is then run, as a worker pool would.
    one.release.open();
    await liveChild;
    for (let i = 0; i < 4; i++) {
      const jobs = await db.prisma.job.findMany({ where: { run_id: childRun.id } });
      if (jobs.length === 0) break;
      await db.prisma.job.deleteMany({ where: { run_id: childRun.id } });
      await executeRun(e.runtime, childRun.id);
    }
    const parentRec = await recordOf(db, runId);
    const childRec = await recordOf(db, childRun.id);
    // Held: the parent ended Terminated once, its audit row says applied, nothing after its end.
    expect([parentRec.run, parentRec.audits, parentRec.ends, parentRec.afterTheEnd]).toEqual([
      { status: 'Terminated', open: false, error: 'Terminated' },
      [['run.terminate', 'applied']],
      1,
      [],
    ]);
    // The child is fenced, not driven on: its in-flight step is recorded, no second step is taken, and
    // its replay closes it (ADR 0125, 0126). Before ADR 0126: Terminated, with step 1 left Running.
    expect({
      child: childRec.run.status,
      childSteps: childRec.steps.map((s) => [s[0], s[1], s[2]]),
      ran,
    }).toEqual({
      child: 'Cancelled',
      childSteps: [
        [1, 'action', 'Completed'],
        [2, 'cancel', 'Completed'],
      ],
      ran: ['one'],
    });
  });
});
