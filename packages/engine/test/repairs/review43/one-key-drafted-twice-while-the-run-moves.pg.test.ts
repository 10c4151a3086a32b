import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RepairCommand } from '../../../src/index.ts';
import { insertApproval } from '../../../src/store/approvals/insert-approval.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { fuzzActions, gates, saga, scripts } from '../review40/support/fuzz-saga.ts';
import { gateEverything, until } from './support/run-rows.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

/**
 * Review 43: one gated command submitted twice with one idempotency key (a retried CLI call, a
 * double-clicked console form) while a live worker moves the run on between the two. ADR 0020:
 * "The same idempotency key is the same draft". The interleaving is forced by progress: another
 * transaction's uncommitted approval row with that key holds the first submit's insert on the unique
 * index (seen in pg_stat_activity) while the worker finishes the step and the second submit runs.
 */
describe('review 43: one idempotency key drafted twice while the run moves on (real PostgreSQL)', () => {
  let t!: T;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [saga], actions: fuzzActions, config: { worker: { concurrency: 4 } } });
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

  it('DEFECT: the key ends with one answer, and its approval can be decided with a typed answer', async () => {
    const key = randomUUID();
    scripts.set(key, { steps: ['gate', 'ok', 'ok'] });
    const { runId } = await t.engine.startFlow(saga, { key });
    await until(
      async () => (gates.has(`${key}:1`) ? t.engine.getRun(runId) : null),
      (d) => d?.run.status === 'Running' && d.actions[0]?.status === 'Running',
      'step 1 at its gate',
    );
    const cmd = {
      kind: 'run.complete_step',
      target: { runId, stepSequence: 1 },
      expected: { runStatus: 'Running', stepStatus: 'Running', stepAttempts: 1 },
      output: { step: 1, by: 'operator' },
      actor: 'r43-drafter',
      reason: 'review 43: the step is stuck at its gate',
      idempotencyKey: randomUUID(),
    } as RepairCommand;

    // Another transaction's uncommitted row with this key: the first submit's insert waits on it.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const blocker = t.db.prisma
      .$transaction(
        async (tx) => {
          await insertApproval(tx, {
            id: randomUUID(),
            createdAt: t.clock.now(),
            expiresAt: new Date(t.clock.now().getTime() + 3_600_000),
            drafter: 'r43-blocker',
            command: cmd.kind,
            targetType: 'step',
            targetId: `${runId}#1`,
            bulk: false,
            payload: {},
            preview: {},
            reason: 'holds the key',
            idempotencyKey: cmd.idempotencyKey,
          });
          holding();
          await released;
          throw new Error('rolled back on purpose');
        },
        { timeout: 60_000, maxWait: 10_000 },
      )
      .catch((e: unknown) => e);
    await held;
    const base = await lockWaiters();
    const first = t.engine.approvals.submit(cmd).then(
      (v) => v.status,
      (e: { code?: string }) => e.code,
    );
    await until(lockWaiters, (n) => n > base, "the first submit to wait on the key's index entry");

    // The worker finishes step 1 meanwhile; the same command is submitted again with the same key.
    gates.get(`${key}:1`)!(true);
    gates.delete(`${key}:1`);
    await until(
      async () => (await t.engine.getRun(runId))!.actions[0]?.status,
      (s) => s === 'Completed',
      'step 1 to complete',
    );
    // Since the fix a submit holds the key's lock while it drafts or audits, so the second waits for the
    // first (which waits on the blocker's row): let the blocker go once the second is waiting too.
    const secondAnswer = t.engine.approvals.submit(cmd).then(
      (v) => v.status,
      (e: { code?: string }) => e.code,
    );
    await until(lockWaiters, (n) => n > base + 1, 'the second submit to wait for the key');
    release();
    await blocker;
    const second = await secondAnswer;
    const firstAnswer = await first;

    const approvals = await t.db.prisma.repairApproval.findMany({ where: { idempotency_key: cmd.idempotencyKey } });
    const audit = await t.db.prisma.repairCommand.findMany({ where: { idempotency_key: cmd.idempotencyKey } });
    const answers = {
      first: firstAnswer,
      second,
      approvals: approvals.map((a) => a.status),
      audit: audit.map((a) => a.status),
    };
    // Whatever the order, the key stands for one thing: a draft, or a refusal, not both.
    if (approvals.length === 1) {
      const approved = await t.engine.approvals.approve(approvals[0]!.id, 'r43-approver').then(
        (v) => v.status,
        (e: { code?: string; message?: string }) => e.code ?? `untyped error: ${e.message?.slice(0, 200)}`,
      );
      const after = await t.engine.approvals.get(approvals[0]!.id);
      const seen = { ...answers, approved, approvalAfter: after?.status };
      expect(seen, `one key, one outcome: an approval that can be decided: ${JSON.stringify(seen)}`).toMatchObject({
        approved: expect.stringMatching(/^(applied|repair_conflict|repair_refused)$/) as unknown,
      });
      expect(after?.status).not.toBe('pending');
    }
    expect(answers, 'the same key answered two different ways').toMatchObject({ first: second });
  });
});
