import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RepairCommand } from '../../../src/index.ts';
import type { Database } from '../../../src/db/database.ts';
import { EngineError } from '../../../src/index.ts';
import { holdRuns } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { runsParkedOnASignal } from './runs-parked-on-a-signal.ts';

/**
 * Review 18. Three operators repair one waiting run at once: signal, cancel and terminate, each
 * drafted against "Waiting", on 8 runs (real PostgreSQL, concurrent connections). A side connection
 * holds the runs' rows while the repairs queue on them, in two orders (progress: lock waiters counted):
 * half the runs get signal and cancel queued before terminate, the other half terminate first. Each repair must
 * either apply fully (its effect, its repair.applied event, its audit row 'applied') or change
 * nothing (an audit row saying conflict/refused, no event). Nothing but the terminating repair's own
 * repair.applied may follow run.terminated.
 */
describe('signal, cancel and terminate repairs racing on one run (PostgreSQL)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 30 });
  });
  afterAll(async () => {
    await db.close();
  });

  it('every repair is applied with its event and audit row, or changes nothing; nothing after the terminal event', async () => {
    const { e, ids } = await runsParkedOnASignal(db, 'review18-three-repairs', 8);
    const base = (runId: string, kind: string) => ({
      kind,
      target: { runId },
      expected: { runStatus: 'Waiting' },
      actor: 'review18@example.test',
      reason: `review18: ${kind}`,
      idempotencyKey: `review18-three-${kind}-${runId}`,
    });
    const outcome = (p: Promise<{ status: string }>) =>
      p.then(
        (r) => r.status,
        (err: unknown) => (err instanceof EngineError ? err.code : `unexpected: ${String(err)}`),
      );
    const held = await holdRuns(db.url!, ids);
    const waiting = async () =>
      (
        await db.prisma.$queryRaw<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock'`
      )[0]!.n;
    const signal = (runId: string) =>
      outcome(e.repairs.apply({ ...base(runId, 'run.signal'), signal: { name: 'go', payload: 'x' } } as RepairCommand));
    const cancel = (runId: string) =>
      outcome(e.repairs.apply({ ...base(runId, 'run.cancel'), cleanupSeconds: 600 } as RepairCommand));
    const terminate = (runId: string) => outcome(e.repairs.apply(base(runId, 'run.terminate') as RepairCommand));
    const half = ids.length / 2;
    // In the first half the signal queues before the cancel (a cancel applied first turns the signal into a
    // conflict: sent together, their order in the lock's queue was the machine's, and CI saw it both ways).
    const first = ids.map((runId, n) => (n < half ? [signal(runId)] : [terminate(runId)]));
    await waitFor('the first repairs to queue on the held runs', async () =>
      (await waiting()) >= ids.length ? true : undefined,
    );
    const next = ids.map((runId, n) => (n < half ? [cancel(runId)] : []));
    await waitFor('the cancels to queue behind the signals', async () =>
      (await waiting()) >= ids.length + half ? true : undefined,
    );
    const second = ids.map((runId, n) => (n < half ? [terminate(runId)] : [signal(runId), cancel(runId)]));
    await waitFor('all the repairs to queue on the held runs', async () =>
      (await waiting()) >= ids.length * 3 ? true : undefined,
    );
    await held.commit();
    const results = await Promise.all(
      ids.map(async (_, n) => {
        const all = [
          ...(await Promise.all(first[n]!)),
          ...(await Promise.all(next[n]!)),
          ...(await Promise.all(second[n]!)),
        ];
        // As signal, cancel, terminate.
        return n < half ? all : [all[1]!, all[2]!, all[0]!];
      }),
    );
    const problems: unknown[] = [];
    for (const [n, runId] of ids.entries()) {
      const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      const events = await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
      const audits = await db.prisma.repairCommand.findMany({ where: { target_id: runId } });
      const applied = events.filter((ev) => ev.type === 'repair.applied');
      for (const a of audits) {
        const hasEvent = applied.some((ev) => (ev.data as { repair?: string }).repair === a.id);
        if ((a.status === 'applied') !== hasEvent)
          problems.push({ runId, audit: a.command, status: a.status, hasEvent });
      }
      if (audits.length !== 3) problems.push({ runId, audits: audits.length });
      if (results[n]!.some((r) => r.startsWith('unexpected'))) problems.push({ runId, results: results[n] });
      const term = events.findIndex((ev) => ev.type === 'run.terminated');
      const terminateAudit = audits.find((a) => a.command === 'run.terminate');
      if (run.status === 'Terminated') {
        const after = events
          .slice(term + 1)
          .filter((ev) => (ev.data as { repair?: string } | null)?.repair !== terminateAudit?.id);
        if (after.length > 0) problems.push({ runId, afterTerminated: after.map((ev) => ev.type) });
      } else problems.push({ runId, status: run.status, results: results[n] });
      const signals = await db.prisma.signal.count({ where: { run_id: runId } });
      const signalApplied = audits.find((a) => a.command === 'run.signal')?.status === 'applied';
      if (signals !== (signalApplied ? 1 : 0)) problems.push({ runId, signals, signalApplied });
    }
    // Both orders were driven: signal and cancel before terminate apply; after it they are conflicts.
    expect(results).toEqual(
      ids.map((_, n) =>
        n < ids.length / 2 ? ['applied', 'applied', 'applied'] : ['repair_conflict', 'repair_conflict', 'applied'],
      ),
    );
    expect(problems).toEqual([]);
  });
});
