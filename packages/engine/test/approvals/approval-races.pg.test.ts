import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/create-engine.ts';
import { createDatabase } from '../../src/db/create-database.ts';
import type { Database } from '../../src/db/database.ts';
import { defineFlow, EngineError } from '../../src/index.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

/** Parks on a signal no one sends: a run that stays Waiting until an operator acts. */
const parked = defineFlow({
  name: 'approval-race-parked',
  version: 1,
  run: async (ctx) => ctx.awaitSignal('never', { timeoutSeconds: 86_400 }),
});

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

/**
 * ADR 0020: two operators deciding one approval at once, each through its own engine and its own
 * connection pool to one PostgreSQL. The approval's row lock serialises them: exactly one decision
 * is taken, the command is applied at most once, and the loser is told `approval_decided`.
 */
describe('two approvers racing on one approval (real PostgreSQL)', () => {
  let first: Database & { url?: string };
  let second: Database;
  let ben: Engine;
  let cleo: Engine;

  beforeAll(async () => {
    first = await openTestDatabase({ poolSize: 12 });
    second = await createDatabase({ kind: 'postgres', url: first.url!, poolSize: 12 });
    const common = { flows: [parked], actions: [], logger: pino({ level: 'silent' }) };
    ben = createEngine({ ...common, db: first, config: { worker: { concurrency: 8, poll_interval_ms: 10 } } });
    cleo = createEngine({ ...common, db: second });
  });
  afterAll(async () => {
    await ben.stopWorkers();
    await second.close();
    await first.close();
  });

  async function waitingRuns(n: number): Promise<string[]> {
    // One at a time: on a loaded machine, dozens of concurrent starts wait past the pool's maxWait.
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await ben.startFlow(parked, null)).runId);
    ben.startWorkers();
    await waitFor(`${n} runs Waiting`, async () => {
      const waiting = await first.prisma.flowRun.count({ where: { id: { in: ids }, status: 'Waiting' } });
      return waiting === n ? true : undefined;
    });
    await ben.stopWorkers();
    return ids;
  }

  async function draftTerminate(runId: string): Promise<string> {
    const r = await ben.approvals.submit({
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      actor: 'ana',
      reason: 'racing approvers',
      idempotencyKey: randomUUID(),
    });
    if (r.status !== 'awaiting_approval') throw new Error('terminate was not gated');
    return r.approvalId;
  }

  it('two approvers approve the same draft at once: exactly one applies it, once (60 drafts)', async () => {
    const runs = await waitingRuns(60);
    const tally = { ben: 0, cleo: 0 };
    for (const runId of runs) {
      const id = await draftTerminate(runId);
      const [b, c] = await Promise.all([
        settle(ben.approvals.approve(id, 'ben')),
        settle(cleo.approvals.approve(id, 'cleo')),
      ]);
      expect([b.ok, c.ok].filter(Boolean), `${runId}: exactly one approval applies`).toHaveLength(1);
      const loser = b.ok ? c : b;
      expect(!loser.ok && loser.error instanceof EngineError && loser.error.code).toBe('approval_decided');
      const winner = b.ok ? 'ben' : 'cleo';
      tally[winner]++;
      const audit = await first.prisma.repairCommand.findMany({ where: { target_id: runId } });
      expect(audit.map((a) => [a.status, a.actor, a.approved_by])).toEqual([['applied', 'ana', winner]]);
      const approval = await first.prisma.repairApproval.findUniqueOrThrow({ where: { id } });
      expect(approval).toMatchObject({ status: 'applied', decided_by: winner });
      const run = await first.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      expect(run.status).toBe('Terminated');
      expect(await first.prisma.flowEvent.count({ where: { run_id: runId, type: 'repair.applied' } })).toBe(1);
    }
    expect(tally.ben + tally.cleo).toBe(60);
    console.info(`approval race: ben won ${tally.ben}, cleo won ${tally.cleo}`);
  });

  it('an approval racing a rejection of the same draft: exactly one decision stands (40 drafts)', async () => {
    const runs = await waitingRuns(40);
    for (const runId of runs) {
      const id = await draftTerminate(runId);
      const [approve, reject] = await Promise.all([
        settle(ben.approvals.approve(id, 'ben')),
        settle(cleo.approvals.reject(id, 'cleo', 'not this one')),
      ]);
      expect([approve.ok, reject.ok].filter(Boolean)).toHaveLength(1);
      const approval = await first.prisma.repairApproval.findUniqueOrThrow({ where: { id } });
      const run = await first.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      const applied = await first.prisma.repairCommand.count({ where: { target_id: runId, status: 'applied' } });
      if (approve.ok) {
        expect(approval.status).toBe('applied');
        expect(run.status).toBe('Terminated');
        expect(applied).toBe(1);
      } else {
        expect(approval).toMatchObject({ status: 'rejected', decided_by: 'cleo' });
        expect(run.status).toBe('Waiting');
        expect(applied).toBe(0);
      }
    }
  });
});
