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
 * over 2,000 open children (or 1,000 with a child each) outlasted that transaction's limit, and the operator got an error with
 * nothing changed (ADR 0126). Judged: the repair is applied; every descendant ends Terminated once
 * with its reason (`parent <p> was terminated: …`, on its error and its cancellation); one audit row,
 * which names the width of the tree.
 */
/**
 * The tree is 2,000 runs wide on PostgreSQL, where the repair's transaction limit is what the defect hit;
 * on PGlite (which enforces no such limit) 400, still four batches after the fence, to keep the suite's time.
 */
const width = testDbKind() === 'postgres' ? 2000 : 400;

describe(`a repair's run.terminate of a wide or deep tree (${testDbKind()})`, () => {
  let db: Database;
  let e: Engine;
  beforeAll(async () => {
    ({ db, e } = await openFix51());
  });
  afterAll(async () => {
    await db.close();
  });

  it.each([
    { shape: 'wide', children: width, grandchildren: 0 },
    { shape: 'deep', children: width / 2, grandchildren: 1 },
  ])(
    'the $shape tree: applied, every descendant Terminated once with its reason, one audit row naming the width',
    { timeout: 120_000 },
    async ({ shape, children, grandchildren }) => {
      const { rootId, descendants } = await buildWideTree(e, db, { children, grandchildren });
      expect(descendants).toHaveLength(width);
      const reason = `fix51: stop the ${shape} tree`;
      const cmd = terminateCommand(rootId, reason);
      const started = Date.now();
      const answer = await e.repairs.apply(cmd).then((r) => r.status, failure);
      const took = Date.now() - started;
      expect(
        { answer, ...(await recordOf(db, rootId, reason, cmd.idempotencyKey)) },
        `the repair took ${took} ms`,
      ).toEqual({
        answer: 'applied',
        root: ['Terminated', 1],
        tree: { terminatedWithReason: width, open: 0, other: 0 },
        audits: ['applied'],
        namesTheWidth: true,
      });
    },
  );
});
