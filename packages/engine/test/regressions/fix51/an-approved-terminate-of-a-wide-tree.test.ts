import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Engine } from '../../../src/index.ts';
import { testDbKind } from '../../support/test-database.ts';
import { failure, openFix51, recordOf, terminateCommand } from './support/repair-record.ts';
import { buildWideTree } from './support/wide-tree.ts';

/**
 * Fix 51. ADR 0125 split the engine's terminate of a wide tree into bounded transactions, but left
 * the repair's `run.terminate` as one: its plan read each descendant's steps, and its perform ended
 * every descendant (about eight statements each) inside the repair's interactive transaction. A root
 * over 2,000 open children outlasted that transaction's limit, and the operator got an error with
 * nothing changed (ADR 0126). Judged: the repair is applied; every descendant ends Terminated once
 * with its reason (`parent <p> was terminated: …`, on its error and its cancellation); one audit row,
 * which names the width of the tree.
 */
/**
 * The tree is 2,000 runs wide on PostgreSQL, where the repair's transaction limit is what the defect hit;
 * on PGlite (which enforces no such limit) 400, still four batches after the fence, to keep the suite's time.
 */
const width = testDbKind() === 'postgres' ? 2000 : 400;

describe(`an approved (two-person) run.terminate of a root over ${width} open children (${testDbKind()})`, () => {
  let db: Database;
  let e: Engine;
  beforeAll(async () => {
    ({ db, e } = await openFix51());
  });
  afterAll(async () => {
    await db.close();
  });

  it(
    'is applied once approved: each child Terminated once with its reason, one audit row, the approval applied',
    { timeout: 120_000 },
    async () => {
      const { rootId } = await buildWideTree(e, db, { children: width });
      const reason = 'fix51: stop the wide tree, approved';
      const cmd = terminateCommand(rootId, reason);
      const drafted = await e.approvals.submit(cmd);
      if (drafted.status !== 'awaiting_approval') throw new Error('run.terminate was not gated');
      const decided = await e.approvals.approve(drafted.approvalId, 'ben@example.test').then((v) => v.status, failure);
      const approval = await db.prisma.repairApproval.findUniqueOrThrow({ where: { id: drafted.approvalId } });
      expect({
        decided,
        approval: approval.status,
        ...(await recordOf(db, rootId, reason, cmd.idempotencyKey)),
      }).toEqual({
        decided: 'applied',
        approval: 'applied',
        root: ['Terminated', 1],
        tree: { terminatedWithReason: width, open: 0, other: 0 },
        audits: ['applied'],
        namesTheWidth: true,
      });
    },
  );
});
