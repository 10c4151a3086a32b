import { randomUUID } from 'node:crypto';
import type { Database } from '../../../../src/db/database.ts';
import { openTestDatabase } from '../../../support/test-database.ts';
import { bareEngine } from '../../harness.ts';
import { treeAsEnded, wideTreeFlows } from './wide-tree.ts';

/**
 * The database and engine of a fix51 test. The repair's transaction may last
 * `processes.transaction_timeout_ms` (30 s by default). Unfixed, 2,000 children took about 10 s of it on
 * an idle machine, and 30 s is outlasted at about 6,000 (or with 2,000 on a loaded one); the limit is
 * set to 5 s here, the engine's own operator transaction's (Prisma's default), rather than building a
 * tree three times as wide in a suite over its time budget.
 */
export async function openFix51() {
  const db = await openTestDatabase();
  const e = bareEngine(db, {
    flows: wideTreeFlows,
    actions: [],
    config: { processes: { transaction_timeout_ms: 5000 } },
  });
  return { db, e };
}

/** A run.terminate of `rootId`, drafted against the Waiting root, with a fresh key. */
export const terminateCommand = (rootId: string, reason: string) => ({
  kind: 'run.terminate' as const,
  target: { runId: rootId },
  expected: { runStatus: 'Waiting' as const },
  actor: 'ana@example.test',
  reason,
  idempotencyKey: randomUUID(),
});

/** A call that threw, as its message's start, so a failed expectation shows it. */
export const failure = (err: unknown) => ({
  threw: String((err as Error).message)
    .replace(/\s+/g, ' ')
    .slice(0, 300),
});

/** What the record says after the command: the root and its end events, its tree, its audit rows and their notes. */
export async function recordOf(db: Database, rootId: string, reason: string, key: string) {
  const rootRun = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: rootId } });
  const rootEnds = await db.prisma.flowEvent.count({ where: { run_id: rootId, type: 'run.terminated' } });
  const audits = await db.prisma.repairCommand.findMany({ where: { idempotency_key: key } });
  const notes = (audits[0]?.result as { effects?: { notes?: string[] } } | null)?.effects?.notes ?? [];
  const tree = await treeAsEnded(db, rootId, reason);
  const width = tree.terminatedWithReason + tree.open + tree.other;
  return {
    root: [rootRun.status, rootEnds],
    tree,
    audits: audits.map((a) => a.status),
    namesTheWidth: notes.some((n) => new RegExp(`\\b${width} open descendants\\b`).test(n)),
  };
}
