import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finishedByMonitor } from '../../src/api/sweep-unfinished-terminates.ts';
import { terminateRootAndFence } from '../../src/api/terminate-run.ts';
import type { Database } from '../../src/db/database.ts';
import { defineFlow, type Json } from '../../src/index.ts';
import { lockOpenRun } from '../../src/store/lock-open-run.ts';
import { lockOpenTree } from '../../src/store/lock-open-tree.ts';
import { createTestEngine, type TestEngine } from '../../src/testing/create-test-engine.ts';
import { runMonitorPass } from '../../src/worker/start-monitor.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

/** G: waits 30 days for a signal. */
const leaf = defineFlow({
  name: 'a139-leaf',
  version: 1,
  run: async (ctx): Promise<Json> => ctx.awaitSignal('go', { timeoutSeconds: 30 * 86_400 }),
});
/** C: awaits its child G. */
const mid = defineFlow({
  name: 'a139-mid',
  version: 1,
  run: async (ctx): Promise<Json> => ctx.child(leaf, null, { cancellation: 'propagate' }),
});
/** P: awaits its child C. */
const top = defineFlow({
  name: 'a139-top',
  version: 1,
  run: async (ctx): Promise<Json> => ctx.child(mid, null, { cancellation: 'propagate' }),
});

const reason = 'stopped by ops';
const afterSeconds = 60;

/**
 * ADR 0140: a terminate that stopped between its batches (a crash, a SIGKILL, a lost connection after its
 * first commit) left its fenced descendants open for ever, unless the command was sent again: nothing woke
 * them and they showed no stuck reason (session 47's note, review 66). The monitor now ends them, once
 * `monitor.unfinished_terminate_after_seconds` have passed since the fence, as the batches would have.
 *
 * P → C → G, all 'propagate'; G waits 30 days for a signal. The terminate of P makes its first commit (P
 * Terminated; C and G fenced: windows closed, no event, no wake) and goes no further. Seen before this change:
 * C and G stayed `Waiting` through any number of monitor passes.
 */
describe(`the monitor finishes a terminate that stopped after its fence (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [top, mid, leaf],
      actions: [],
      config: { monitor: { unfinished_terminate_after_seconds: afterSeconds } },
    });
  });
  afterEach(async () => {
    await t?.close();
    await db?.close();
  });

  /** P → C → G with G waiting for its signal, the workers stopped. */
  async function tree() {
    const { runId: p } = await t.engine.startFlow(top, null);
    t.engine.startWorkers();
    const ids = await waitFor('G to wait for its signal', async () => {
      const cRow = await db.prisma.flowRun.findFirst({ where: { parent_run_id: p } });
      const gRow = cRow && (await db.prisma.flowRun.findFirst({ where: { parent_run_id: cRow.id } }));
      return cRow?.status === 'Waiting' && gRow?.status === 'Waiting' && gRow.waiting_for?.includes('go')
        ? { c: cRow.id, g: gRow.id }
        : undefined;
    });
    await t.engine.stopWorkers();
    return { p, ...ids };
  }

  /** The terminate's first commit, as terminateRun makes it, and no batch after it. */
  async function fenceOnly(p: string): Promise<number> {
    t.clock.advance(1000);
    return db.prisma.$transaction(async (tx) => {
      await lockOpenTree(tx, p);
      if (!(await lockOpenRun(tx, p, 'update'))) throw new Error('P not open');
      return (await terminateRootAndFence(tx, p, reason, t.clock.now())).fenced;
    });
  }

  const pass = async () => {
    const r = await runMonitorPass(t.engine.runtime, { doctor: false, ttlSeconds: 30, release: true });
    if (!r.swept) throw new Error(`the monitor did not sweep: ${r.reason}`);
    return r.terminates?.terminated ?? null;
  };

  /** Each run as it stands: status, error message, and its run.terminated events' finished_by. */
  async function ended(ids: string[]) {
    const out: Record<string, { status: string; message: unknown; terminatedEvents: unknown[] }> = {};
    for (const id of ids) {
      const row = await db.prisma.flowRun.findUniqueOrThrow({ where: { id } });
      const events = await db.prisma.flowEvent.findMany({ where: { run_id: id, type: 'run.terminated' } });
      out[id] = {
        status: row.status,
        message: (row.error as { message?: unknown } | null)?.message ?? null,
        terminatedEvents: events.map((e) => (e.data as { finished_by?: unknown }).finished_by ?? null),
      };
    }
    return out;
  }

  it('after the grace, C and G are Terminated once each with the batch’s reasons; nothing before it', async () => {
    const { p, c, g } = await tree();
    // A sibling of C asked to cancel before the terminate (an hour's cleanup window), as a cancel leaves it.
    const [s] = await db.prisma.$queryRaw<{ id: string }[]>`
      insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, status, input, parent_run_id, parent_sequence,
                                          parent_cancel_policy, cancel_requested_at, cancel_reason, cancel_deadline_at)
      values (gen_random_uuid(), ${leaf.name}, 1, 'Waiting', 'null'::jsonb, ${p}::uuid, 99, 'propagate',
              ${t.clock.now()}::timestamptz, ${`parent ${p} was cancelled: earlier`},
              ${new Date(t.clock.now().getTime() + 3_600_000)}::timestamptz)
      returning id::text as id`;
    expect(await fenceOnly(p)).toBe(3);

    // Within the grace the terminate may still be walking its tree: the monitor leaves it to it.
    t.clock.advance((afterSeconds - 5) * 1000);
    expect(await pass()).toBe(0);
    expect(Object.values(await ended([c, g, s!.id])).map((r) => r.status)).toEqual(['Waiting', 'Waiting', 'Waiting']);

    t.clock.advance(10_000);
    expect(await pass()).toBe(3);
    expect(await ended([p, c, g, s!.id])).toEqual({
      [p]: { status: 'Terminated', message: reason, terminatedEvents: [null] },
      [c]: {
        status: 'Terminated',
        message: `parent ${p} was terminated: ${reason}`,
        terminatedEvents: [finishedByMonitor],
      },
      [g]: {
        status: 'Terminated',
        message: `parent ${c} was terminated: parent ${p} was terminated: ${reason}`,
        terminatedEvents: [finishedByMonitor],
      },
      [s!.id]: {
        status: 'Terminated',
        message: `parent ${p} was terminated: ${reason}`,
        terminatedEvents: [finishedByMonitor],
      },
    });
    // G ran no code after the fence: its signal wait is not Completed, and no step was added to any run.
    expect(await db.prisma.actionRun.count({ where: { run_id: g, status: 'Completed' } })).toBe(0);
    expect(await pass()).toBe(0);
  });

  it('G, fenced under a C that closed at its window before its batch, is Terminated by the monitor', async () => {
    const { p, c, g } = await tree();
    expect(await fenceOnly(p)).toBe(2);
    // C is woken (a kick) and closes at its closed window; G is left fenced under a Cancelled C (review 66's D2).
    await t.engine.kick(c);
    t.engine.startWorkers();
    await waitFor('C to close', async () => {
      const row = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: c } });
      return row.status === 'Cancelled' ? true : undefined;
    });
    await t.engine.stopWorkers();
    t.clock.advance((afterSeconds + 5) * 1000);
    expect(await pass()).toBe(1);
    expect(await ended([g])).toEqual({
      [g]: {
        status: 'Terminated',
        message: `parent ${c} was terminated: parent ${p} was terminated: ${reason}`,
        terminatedEvents: [finishedByMonitor],
      },
    });
  });

  it('leaves a cancel’s tree alone: its runs close through their own wakes, not as Terminated', async () => {
    const { p, c, g } = await tree();
    expect(await t.engine.cancel(p, { reason: 'customer asked', cleanupSeconds: 1 })).toEqual({ requested: true });
    // Past every cleanup window and the grace, the workers stopped: the runs are open, their wakes queued.
    t.clock.advance((afterSeconds + 5) * 1000);
    expect(await pass()).toBe(0);
    const rows = await db.prisma.flowRun.findMany({ where: { id: { in: [p, c, g] } }, select: { status: true } });
    expect(rows.map((r) => r.status).sort()).toEqual(['Waiting', 'Waiting', 'Waiting']);
    expect(await db.prisma.flowEvent.count({ where: { run_id: { in: [p, c, g] }, type: 'run.terminated' } })).toBe(0);
  });
});
