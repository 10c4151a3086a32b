import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { historyOf } from '../../support/round-items.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { runsParkedOnASignal } from './runs-parked-on-a-signal.ts';

/**
 * Review 18. A bulk terminate over three waiting runs, drafted against "Waiting" for each: while the
 * bulk applies its first item, the second run is signalled and replayed to Completed (driven from the
 * first item's run.finished listener, which the repair awaits: progress, not time). The bulk must
 * then refuse that item as a conflict with its audit row, change nothing of it (nothing after its
 * run.completed), and still apply the third.
 */
describe(`a bulk terminate over runs one of which finishes mid-way (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('the finished run is a conflict with its audit row and nothing after its end; the others are terminated', async () => {
    const { e, ids } = await runsParkedOnASignal(db, 'review18-bulk-waiting', 3);
    const statuses = await db.prisma.flowRun.findMany({ where: { id: { in: ids } } });
    expect(new Set(statuses.map((s) => s.status))).toEqual(new Set(['Waiting']));

    let finishedMidWay = false;
    e.events.on('run.finished', async (ev) => {
      if (ev.runId !== ids[0] || finishedMidWay) return;
      finishedMidWay = true;
      await e.signal(ids[1]!, 'go', 'mid-way');
      expect(await executeRun(e.runtime, ids[1]!)).toBe('finished');
    });
    const bulk = await e.repairs.applyBulk({
      kind: 'run.terminate',
      actor: 'review18@example.test',
      reason: 'review18: bulk terminate',
      idempotencyKey: 'review18-bulk',
      items: ids.map((runId) => ({ target: { runId }, expected: { runStatus: 'Waiting' } })),
    });
    expect(finishedMidWay).toBe(true);

    const runs = new Map((await db.prisma.flowRun.findMany({ where: { id: { in: ids } } })).map((r) => [r.id, r]));
    const audits = await db.prisma.repairCommand.findMany({ where: { bulk_id: bulk.bulkId } });
    const auditOf = (id: string) => audits.filter((a) => a.target_id === id).map((a) => a.status);
    const midHistory = await historyOf(db, ids[1]!);
    expect({
      outcomes: bulk.items.map((i) => i.outcome),
      statuses: ids.map((id) => runs.get(id)!.status),
      audits: ids.map(auditOf),
      midRunEndsWith: midHistory.slice(midHistory.indexOf('run.completed')),
      midRunOutput: runs.get(ids[1]!)!.output,
    }).toEqual({
      outcomes: ['applied', 'conflict', 'applied'],
      statuses: ['Terminated', 'Completed', 'Terminated'],
      audits: [['applied'], ['conflict'], ['applied']],
      midRunEndsWith: ['run.completed'],
      midRunOutput: 'mid-way',
    });
  });
});
