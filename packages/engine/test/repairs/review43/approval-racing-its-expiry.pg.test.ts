import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { fuzzActions, gates, saga, scripts } from '../review40/support/fuzz-saga.ts';
import { gateEverything, until } from './support/run-rows.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

const expireAfter = 600;

/**
 * Review 43: an approval that expires while its approver waits for the approval's row (another
 * transaction holds it). ADR 0020: the approval row is locked first and "must still be pending and
 * unexpired"; an expired one is `approval_expired` and nothing changes.
 */
describe('review 43: an approval racing its expiry (real PostgreSQL)', () => {
  let t!: T;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [saga],
      actions: fuzzActions,
      config: { worker: { concurrency: 4 }, approvals: { expire_after_seconds: expireAfter } },
    });
    await gateEverything(t);
    t.engine.startWorkers();
  });
  afterAll(async () => {
    for (const g of gates.values()) g(true);
    await t?.closeAll();
  });

  const lockWaiters = async () =>
    Number(
      (
        await t.db.prisma.$queryRaw<{ n: bigint }[]>`
          select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`
      )[0]!.n,
    );

  /** Holds the approval's row until the returned release is called; resolves once it is held. */
  async function holdRow(id: string) {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const done = t.db.prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`select id from "sagaflow"."repair_approvals" where id = ${id}::uuid for update`;
        holding();
        await released;
      },
      { timeout: 60_000, maxWait: 10_000 },
    );
    await held;
    return async () => {
      release();
      await done;
    };
  }

  for (const bulk of [false, true])
    it(`a ${bulk ? 'bulk ' : ''}terminate approved just before its expiry, decided just after: ${bulk ? 'its record says it was decided in time' : 'expired, nothing applied'}`, async () => {
      const key = randomUUID();
      scripts.set(key, { steps: ['gate', 'ok', 'ok'] });
      const { runId } = await t.engine.startFlow(saga, { key });
      await until(
        async () => (gates.has(`${key}:1`) ? t.engine.getRun(runId) : null),
        (d) => d?.run.status === 'Running',
        'step 1 at its gate',
      );
      const cmd = {
        kind: 'run.terminate',
        actor: 'r43-drafter',
        reason: 'review 43 expiry race',
        idempotencyKey: randomUUID(),
      };
      const drafted = bulk
        ? await t.engine.approvals.submitBulk({
            ...cmd,
            items: [
              { target: { runId }, expected: { runStatus: 'Running' } },
              // A second target (a finished run would do; a fresh one here) puts the bulk over the threshold of 1.
              { target: { runId: randomUUID() }, expected: { runStatus: 'Running' } },
            ],
          })
        : await t.engine.approvals.submit({ ...cmd, target: { runId }, expected: { runStatus: 'Running' } });
      if (!('status' in drafted) || drafted.status !== 'awaiting_approval') throw new Error('not gated');
      t.clock.advance((expireAfter - 1) * 1000);
      const release = await holdRow(drafted.approvalId);
      const base = await lockWaiters();
      const approving = t.engine.approvals.approve(drafted.approvalId, 'r43-approver').then(
        (v) => v.status,
        (e: { code?: string }) => e.code,
      );
      await until(lockWaiters, (n) => n > base, 'the approver to wait on the approval row');
      // The approval expires while the approver waits.
      t.clock.advance(2_000);
      await release();
      const outcome = await approving;
      const a = await t.engine.approvals.get(drafted.approvalId);
      const terminated = await t.db.prisma.flowEvent.count({
        where: { run_id: runId, type: { in: ['repair.applied', 'run.terminated'] } },
      });
      const rows = await t.db.prisma.repairCommand.count({ where: { approval_id: drafted.approvalId } });
      if (!bulk)
        expect([outcome, a?.status, terminated, rows], 'an approval past its expiry is not applied').toEqual([
          'approval_expired',
          'expired',
          0,
          0,
        ]);
      // A bulk is claimed by a compare-and-swap against the time its approve call began (review 43: seen, not
      // called a defect): applied or expired, its record must say it was decided before it expired.
      else if (a?.status === 'applied') expect(a.decidedAt! < a.expiresAt, 'decided before its expiry').toBe(true);
      else expect([outcome, a?.status, terminated, rows]).toEqual(['approval_expired', 'expired', 0, 0]);
      gates.get(`${key}:1`)?.(true);
    });
});
