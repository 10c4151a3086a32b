import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import type { StepTransition } from '../../../src/store/step-transitions.ts';
import { activeRun as writeActiveRun } from '../../support/active-run.ts';
import { heldFirstTransitions } from '../../support/held-first-transitions.ts';
import { holdRuns } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * ADR 0045 decision 4: a batch locks its runs in id order, and a writer that takes two of them the
 * other way round (here a session holding the later run, then asking for the earlier one, as no
 * writer of the engine does today) meets it in a cycle that PostgreSQL's detector breaks. When the
 * batch is the one rolled back (40P01, an ERROR: it wrote nothing), each of its items is resent alone
 * and claimed once the session lets go: review 9 narrowed the resend to the server's refusals, and
 * a deadlock must stay one of them.
 */
const worker = 'review9-deadlock';

describe('a batch of transitions chosen as a deadlock victim (PostgreSQL)', () => {
  let db: Database;
  let url = '';
  let holder: pg.Client;
  beforeAll(async () => {
    const first = await openTestDatabase();
    url = first.url!;
    // The batch's backends check for a cycle 3 s into a wait, the holder's after a minute: the
    // batch, whose wait closes the cycle (the holder waits already), is the one rolled back.
    await first.prisma.$executeRawUnsafe(
      `do $$ begin execute format('alter database %I set deadlock_timeout to %L', current_database(), '3s'); end $$`,
    );
    await first.close();
    db = await createDatabase({ kind: 'postgres', url: first.url! });
    holder = new pg.Client({ connectionString: first.url });
    await holder.connect();
  });
  afterAll(async () => {
    await holder.end();
    await db.close();
  });

  const activeRun = () => writeActiveRun(db, 'review9-deadlock', worker);
  const firstStep = (runId: string): StepTransition => ({
    step: { runId, sequence: 1, kind: 'action', name: 'first', input: null, reclaimAfterSeconds: 30 },
    workerId: worker,
    now: new Date(),
    cancellationKnown: false,
    started: { type: 'action.started', sequence: 1, data: {} },
  });

  it('is resent item by item, and each run gets its step once', async () => {
    const [lone, a, b] = [await activeRun(), await activeRun(), await activeRun()];
    const [earlier, later] = [a, b].sort() as [string, string];
    await holder.query('BEGIN');
    await holder.query(`set local deadlock_timeout = '1min'`);
    await holder.query(`select 1 from "sagaflow"."flow_runs" where id = $1 for update`, [later]);
    const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    // The earlier run is held apart at first, so that the holder queues for it behind the batch before the
    // batch asks for the later run (see below).
    const earlierHeld = await holdRuns(url, [earlier]);

    const { batcher, sizes, release } = heldFirstTransitions(db);
    // The lone run's statement is out; the two others wait for it and go together.
    const first = batcher.submit(firstStep(lone));
    const both = [earlier, later].map((runId) => batcher.submit(firstStep(runId)));
    release();
    await first;
    // The batch waits for the earlier run; the holder (which has the later one) queues for it behind the batch.
    await waitFor('the batch to wait for the earlier run', async () => {
      const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock' and query like '%sagaflow: step transitions%'`;
      return row!.n > 0 ? true : undefined;
    });
    const holderGotEarlier = holder.query(`select 1 from "sagaflow"."flow_runs" where id = $1 for update`, [earlier]);
    await waitFor('the holder to queue for the earlier run', async () => {
      const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity where pid = ${holderPid} and wait_event_type = 'Lock'`;
      return row!.n > 0 ? true : undefined;
    });
    // Let go: the batch takes the earlier run and waits for the later, which the holder has, while the holder
    // waits for the batch: a cycle. A backend checks once per wait, deadlock_timeout into it: the batch, 3 s into
    // its wait for the later run, is the one that finds it, however loaded the machine (had the holder asked
    // only once the batch waited for the later run, a poll slower than 3 s would have made the holder, checking
    // a minute in, the victim).
    await earlierHeld.commit();
    await holderGotEarlier;
    await holder.query('COMMIT');

    const results = await Promise.all(both);
    expect(sizes, 'the batch was rolled back and its two items sent alone').toEqual([1, 2, 1, 1]);
    for (const [n, runId] of [earlier, later].entries()) {
      expect(results[n], runId).toMatchObject({
        runOpen: true,
        row: { run_id: runId, sequence: 1, status: 'Running' },
      });
      expect(await db.prisma.actionRun.count({ where: { run_id: runId } })).toBe(1);
      const events = await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
      expect(events.map((e) => e.type)).toEqual(['run.started', 'run.running', 'action.started']);
    }
  });
});
