import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { finishedByMonitor } from '../../../src/api/sweep-unfinished-terminates.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { runMonitorPass } from '../../../src/worker/start-monitor.ts';
import { bareEngine } from '../harness.ts';
import { buildWideTree, treeAsEnded, wideTreeFlows } from './support/wide-tree.ts';

const script = fileURLToPath(new URL('./support/terminate-repair-operator.ts', import.meta.url));

/**
 * Fix 51 (ADR 0126). A repair's run.terminate of a root over 2,000 open children commits the root, the
 * fence of its tree and its audit row first, then ends the children a hundred per transaction. Its
 * operator process is SIGKILLed between two batches (after the first committed: progress, its
 * `run.finished` events). Judged: what committed is whole and true (the root Terminated once, one
 * applied audit row, the first 100 children Terminated with their reason, the other 1,900 open but
 * fenced: their cleanup window closed, no wake queued for them), and the command sent again with the
 * same key, or a terminate of the run, finishes the rest: every child Terminated once with its reason,
 * still one audit row.
 */
describe('a terminate repair stopped between its batches (SIGKILL, real PostgreSQL)', () => {
  const suite = childWorkerSuite();

  async function stoppedBetweenBatches(clock = new TestClock(), children = 2000) {
    const e = suite.adopt(
      bareEngine(suite.db, {
        flows: wideTreeFlows,
        actions: [],
        clock,
        config: { processes: { transaction_timeout_ms: 5000 } },
      }),
    );
    const { rootId, descendants } = await buildWideTree(e, suite.db, { children });
    const reason = 'fix51: stop the tree, then the operator';
    const key = randomUUID();
    const operator = await suite.spawn(script, { args: [rootId, reason, key] });
    // Unfixed, the repair's one transaction outlasted its limit and the process said so instead.
    const [said] = await operator.printed(/^(stopped after 100|answered .*|failed .*)$/m, 60_000);
    expect(said).toBe('stopped after 100');
    expect(await operator.kill()).toBe('SIGKILL');

    const db = suite.db;
    const rootRun = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: rootId } });
    const fenced = await db.prisma.flowRun.count({
      where: {
        id: { in: descendants },
        status: 'Waiting',
        cancel_requested_at: { not: null },
        cancel_deadline_at: { lte: rootRun.finished_at! },
        cancel_reason: `parent ${rootId} was terminated: ${reason}`,
      },
    });
    // The fence queues nothing: a wake only if the child had one of its own before (its signal's timeout).
    const wakesAfterTheFence = await db.prisma.job.count({
      where: { run_id: { in: descendants }, created_at: { gte: rootRun.finished_at! } },
    });
    expect({
      root: [rootRun.status, await db.prisma.flowEvent.count({ where: { run_id: rootId, type: 'run.terminated' } })],
      audits: (await db.prisma.repairCommand.findMany({ where: { idempotency_key: key } })).map((a) => a.status),
      tree: await treeAsEnded(db, rootId, reason),
      fenced,
      wakesAfterTheFence,
    }).toEqual({
      root: ['Terminated', 1],
      audits: ['applied'],
      tree: { terminatedWithReason: 100, open: children - 100, other: 0 },
      fenced: children - 100,
      wakesAfterTheFence: 0,
    });
    return { e, rootId, reason, key };
  }

  it(
    'the same command sent again finishes it: every child Terminated once, one audit row',
    {
      timeout: 120_000,
    },
    async () => {
      const { e, rootId, reason, key } = await stoppedBetweenBatches();
      const again = await e.repairs.apply({
        kind: 'run.terminate',
        target: { runId: rootId },
        expected: { runStatus: 'Waiting' },
        actor: 'ana@example.test',
        reason,
        idempotencyKey: key,
      });
      expect({
        again: [again.status, again.replayed],
        said: again.afterCommit?.filter((n) => n.startsWith('terminated on this replay')),
        tree: await treeAsEnded(suite.db, rootId, reason),
        audits: await suite.db.prisma.repairCommand.count({ where: { idempotency_key: key } }),
      }).toEqual({
        again: ['applied', true],
        said: ['terminated on this replay: 1900 descendants'],
        tree: { terminatedWithReason: 2000, open: 0, other: 0 },
        audits: 1,
      });
    },
  );

  it("a terminate of the run finishes it too (ADR 0125's path)", { timeout: 120_000 }, async () => {
    const { e, rootId, reason, key } = await stoppedBetweenBatches();
    expect(await e.terminate(rootId, { reason })).toEqual({ terminated: true });
    expect({
      tree: await treeAsEnded(suite.db, rootId, reason),
      audits: await suite.db.prisma.repairCommand.count({ where: { idempotency_key: key } }),
    }).toEqual({ tree: { terminatedWithReason: 2000, open: 0, other: 0 }, audits: 1 });
  });

  it(
    'sent by nobody again, the monitor finishes it once the grace has passed (ADR 0140)',
    { timeout: 180_000 },
    async () => {
      const clock = new TestClock();
      // 400 children: the stop and what is left are the same as with 2,000; the repair's first commit stays well
      // within the operator's 5 s on a loaded machine.
      const { e, rootId, reason, key } = await stoppedBetweenBatches(clock, 400);
      const pass = async () => {
        const r = await runMonitorPass(e.runtime, { doctor: false, ttlSeconds: 60, release: true });
        if (!r.swept) throw new Error(`the monitor did not sweep: ${r.reason}`);
        return r.terminates?.terminated ?? null;
      };
      // The engine's clock reaches the fence's time (the operator's own clock), still within the grace.
      const rootRun = await suite.db.prisma.flowRun.findUniqueOrThrow({ where: { id: rootId } });
      clock.set(rootRun.finished_at!);
      expect(await pass()).toBe(0);
      expect((await treeAsEnded(suite.db, rootId, reason)).open).toBe(300);

      // Past the grace (60 s by default): passes until one ends nothing, each bounded by its time budget.
      clock.advance(61_000);
      const passes: number[] = [];
      for (let n = await pass(); n !== 0 && passes.length < 1000; n = await pass()) passes.push(n ?? -1);
      const finishedBy = await suite.db.prisma.$queryRawUnsafe<{ n: number }[]>(
        `select count(*)::int as n from "sagaflow"."flow_events" e join "sagaflow"."flow_runs" r on r.id = e.run_id
        where r.parent_run_id = $1::uuid and e.type = 'run.terminated' and e.data->>'finished_by' = $2`,
        rootId,
        finishedByMonitor,
      );
      expect({
        ended: passes.reduce((a, b) => a + b, 0),
        tree: await treeAsEnded(suite.db, rootId, reason),
        finishedByMonitor: finishedBy[0]?.n,
        audits: await suite.db.prisma.repairCommand.count({ where: { idempotency_key: key } }),
      }).toEqual({
        ended: 300,
        tree: { terminatedWithReason: 400, open: 0, other: 0 },
        finishedByMonitor: 300,
        audits: 1,
      });
    },
  );
});
