import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, defineAction, defineFlow, type Engine } from '../src/index.ts';
import { jobChannel } from '../src/store/job-channel.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

const ran: number[] = [];
const step = defineAction({ name: 'job-notify-step', run: async (n: number) => (ran.push(n), n) });
const flow = defineFlow({ name: 'job-notify', version: 1, run: async (ctx, n: number) => ctx.action(step, n) });

/**
 * Migration 0021's trigger (ADR 0038) on both databases: which queued jobs notify, and that a pool
 * whose poll is a minute away runs a run another engine on the same database started.
 */
describe(`a job due now notifies the pools at its commit (${testDbKind()})`, () => {
  let db: Awaited<ReturnType<typeof openTestDatabase>>;
  const heard: string[] = [];
  let close: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    db = await openTestDatabase();
    const subscription = await db.listen!(jobChannel, (payload) => heard.push(payload));
    close = () => subscription.close();
  });
  afterAll(async () => {
    await close();
    await db.close();
  });

  it('only a committed, unleased job due now notifies, once per statement, with its kind', async () => {
    const run = await db.prisma.flowRun.create({ data: { flow_name: 'job-notify', flow_version: 1, input: 1 } });
    try {
      const now = new Date();
      const later = new Date(now.getTime() + 3_600_000);
      // A wake leased to the worker that runs it (a start's hand-off), a timer's wake due in an hour,
      // and a wake whose transaction rolled back: none may wake anyone.
      await db.prisma.job.create({
        data: { kind: 'wake-run', run_id: run.id, available_at: now, locked_by: 'w', locked_until: later },
      });
      await db.prisma.job.create({ data: { kind: 'wake-run', run_id: run.id, available_at: later } });
      await db.prisma
        .$transaction(async (tx) => {
          await tx.job.create({ data: { kind: 'wake-run', run_id: run.id, available_at: now } });
          throw new Error('roll back');
        })
        .catch(() => undefined);
      // Then three due wakes in one statement: one notification.
      await db.prisma.job.createMany({
        data: [1, 2, 3].map(() => ({ kind: 'wake-run', run_id: run.id, available_at: now })),
      });
      // Notifications arrive in commit order: had any of the first three notified, it would be here first.
      await waitFor('the notification', async () => (heard.length > 0 ? true : undefined));
      expect(heard).toEqual(['wake-run']);
    } finally {
      await db.prisma.job.deleteMany({ where: { run_id: run.id } });
      await db.prisma.flowRun.delete({ where: { id: run.id } });
    }
  });

  it('a pool whose poll is a minute away runs a run that another engine on the same database started', async () => {
    const quiet = pino({ level: 'silent' });
    const starter = createEngine({ db, flows: [flow], actions: [step], logger: quiet });
    const worker: Engine = createEngine({
      db,
      flows: [flow],
      actions: [step],
      logger: quiet,
      config: { worker: { poll_interval_ms: 60_000 } },
    });
    worker.startWorkers();
    try {
      const { runId } = await starter.startFlow(flow, 7);
      await waitFor('the run to complete', async () =>
        (await worker.getRun(runId))?.run.status === 'Completed' ? true : undefined,
      );
      expect(ran).toEqual([7]);
    } finally {
      await worker.stopWorkers();
    }
  });
});
