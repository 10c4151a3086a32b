import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/create-engine.ts';
import { createDatabase } from '../../src/db/create-database.ts';
import type { Database } from '../../src/db/database.ts';
import { defineAction, defineFlow, EngineError, type RepairCommand } from '../../src/index.ts';
import { SimulatedCrash } from '../../src/runtime/runtime-deps.ts';
import { writePendingOutcome } from '../../src/runtime/steps/pending-outcome.ts';
import { beatWorker } from '../../src/store/beat-worker.ts';
import { claimStep } from '../../src/store/claim-step.ts';
import { enqueueJob } from '../../src/store/enqueue-job.ts';
import { stopWorker } from '../../src/store/stop-worker.ts';
import { seedStep } from '../support/seed-step.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';
import { ticket } from './support/repair-fixtures.ts';
import { snapshotTables } from './support/snapshot.ts';

/**
 * Issue 9: a repair racing the engine on the same run or instance, over real concurrent connections
 * to one PostgreSQL. Exactly one wins; the loser is repair_conflict (or the worker's
 * outcome_rejected); the audit row states what really happened. Faults follow progress: each race
 * starts once the database shows both sides ready, never after a sleep.
 */

const gates = new Map<string, () => void>();
const gated = defineAction({
  name: 'race-gated',
  run: (i: { key: string }) =>
    new Promise<{ from: string }>((resolve) => gates.set(i.key, () => resolve({ from: 'worker' }))),
});
const gatedFlow = defineFlow({
  name: 'race-gated-flow',
  version: 1,
  run: async (ctx, i: { key: string }) => ctx.action(gated, i).run(),
});

/** How many times a live worker ran the compensation, per run key: the dead worker's run is not counted. */
const undone = new Map<string, number>();
const charge = defineAction({ name: 'race-charge', run: async (i: { key: string }) => ({ charged: i.key }) });
const refund = defineAction({
  name: 'race-refund',
  run: async (i: { key: string }) => {
    undone.set(i.key, (undone.get(i.key) ?? 0) + 1);
    return { from: 'replacement' };
  },
});
/** Charges, then rolls the charge back: its one compensation is what the race is about. */
const refundFlow = defineFlow({
  name: 'race-refund-flow',
  version: 1,
  run: async (ctx, i: { key: string }) => {
    await ctx
      .action(charge, i)
      .compensateWith(refund, () => i)
      .run();
    await ctx.compensate();
    return 'rolled back';
  },
});

const who = { actor: 'race-operator', reason: 'racing the engine' };
/** The late writers' transactions: 25 share one pool, so on a loaded machine one may wait past the 2 s default. */
const lateTx = { maxWait: 60_000, timeout: 60_000 };
const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

describe('repairs racing the engine (real PostgreSQL)', () => {
  let first: Database & { url?: string };
  let second: Database;
  let workers: Engine;
  let operator: Engine;

  beforeAll(async () => {
    first = await openTestDatabase({ poolSize: 12 });
    second = await createDatabase({ kind: 'postgres', url: first.url!, poolSize: 12 });
    const common = {
      flows: [gatedFlow],
      actions: [gated],
      processes: [ticket],
      logger: pino({ level: 'silent' }),
    };
    workers = createEngine({
      ...common,
      db: first,
      config: { worker: { concurrency: 20, poll_interval_ms: 10 }, logging: { anomaly_level: null } },
    });
    operator = createEngine({ ...common, db: second, config: { logging: { anomaly_level: null } } });
  });
  afterAll(async () => {
    await workers.stopWorkers();
    await second.close();
    await first.close();
  });

  it('complete_step racing the worker that holds the step: one outcome, the other refused, the audit row true (200 runs)', async () => {
    workers.startWorkers();
    const tally = { repair: 0, worker: 0 };
    for (let batch = 0; batch < 10; batch++) {
      const runs = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const key = randomUUID();
          const { runId } = await workers.startFlow(gatedFlow, { key });
          return { key, runId };
        }),
      );
      // Progress, not time: every step is claimed and its action is waiting at its gate.
      await waitFor('all steps Running at their gate', async () =>
        runs.every((r) => gates.has(r.key)) ? true : undefined,
      );
      const results = await Promise.all(
        runs.map(async (r, i) => {
          const cmd = {
            kind: 'run.complete_step',
            target: { runId: r.runId, stepSequence: 1 },
            expected: { runStatus: 'Running', stepStatus: 'Running', stepAttempts: 1 },
            output: { from: 'operator' },
            ...who,
            idempotencyKey: randomUUID(),
          } as RepairCommand;
          const repair = settle(operator.repairs.apply(cmd));
          // Vary who starts first (correctness never depends on it: each order is asserted below).
          if (i % 3 > 0) await sleep(i % 3);
          gates.get(r.key)!();
          return { ...r, repair: await repair };
        }),
      );
      await waitFor('every raced run finished', async () => {
        const open = await first.prisma.flowRun.count({
          where: { id: { in: runs.map((r) => r.runId) }, finished_at: null },
        });
        return open === 0 ? true : undefined;
      });
      for (const r of results) {
        const run = await first.prisma.flowRun.findUniqueOrThrow({ where: { id: r.runId } });
        const audit = await first.prisma.repairCommand.findMany({ where: { target_id: `${r.runId}#1` } });
        const rejected = await first.prisma.anomalyLog.count({ where: { run_id: r.runId, code: 'outcome_rejected' } });
        expect(run.status).toBe('Completed');
        expect(audit).toHaveLength(1);
        if (r.repair.ok) {
          tally.repair++;
          expect(run.output, 'the repair won: its output is recorded').toEqual({ from: 'operator' });
          expect(audit[0]).toMatchObject({ status: 'applied', id: r.repair.value.id });
          // The worker's outcome is journaled, never recorded: rejected by the fence while the run is
          // open, refused once the repair's wake finished the run (ADR 0011). Its journal row follows
          // the worker's own transaction, which can come after the run finished: wait for it.
          const journaled = await waitFor("the worker's outcome to be journaled", async () => {
            const n = await first.prisma.anomalyLog.count({
              where: { run_id: r.runId, code: { in: ['outcome_rejected', 'write_refused'] } },
            });
            return n > 0 ? n : undefined;
          });
          expect(journaled, "the worker's outcome was rejected or refused, and journaled once").toBe(1);
        } else {
          tally.worker++;
          expect(r.repair.error).toMatchObject({ code: 'repair_conflict' });
          expect(run.output, 'the worker won: its output is recorded').toEqual({ from: 'worker' });
          expect(audit[0]).toMatchObject({ status: 'conflict', actual: { step: { status: 'Completed' } } });
          expect(rejected).toBe(0);
        }
      }
      for (const r of runs) gates.delete(r.key);
    }
    expect(tally.repair + tally.worker).toBe(200);
    console.info(`complete_step vs worker: repair won ${tally.repair}, worker won ${tally.worker}`);
  });

  it('an operator command racing deliver() on one instance: exactly one moves it (300 instances)', async () => {
    const tally = { repair: 0, message: 0 };
    for (let batch = 0; batch < 12; batch++) {
      const keys = Array.from({ length: 25 }, () => `race-${randomUUID().slice(0, 8)}`);
      const instances = await Promise.all(
        keys.map(async (key) => {
          await workers.processes.deliver(ticket, { id: `o-${key}`, type: 'Opened', payload: { key } });
          const r = await workers.processes.deliver(ticket, { id: `r-${key}`, type: 'Reviewed', payload: { key } });
          const row = await first.prisma.sagaInstance.findUniqueOrThrow({ where: { id: r.instanceId! } });
          return { key, id: row.id, version: row.version };
        }),
      );
      const raced = await Promise.all(
        instances.map(async (i, n) => {
          // Every other race sends the message first (each order is asserted the same way below).
          const early =
            n % 2 === 1
              ? workers.processes.deliver(ticket, { id: `re-${i.key}`, type: 'Reopen', payload: { key: i.key } })
              : null;
          const repair = settle(
            operator.repairs.apply({
              kind: 'instance.command',
              target: { instanceId: i.id },
              expected: { state: 'Review', version: i.version },
              command: 'Close',
              input: { resolution: 'closed by an operator' },
              ...who,
              idempotencyKey: randomUUID(),
            }),
          );
          const message =
            early ?? workers.processes.deliver(ticket, { id: `re-${i.key}`, type: 'Reopen', payload: { key: i.key } });
          return { ...i, repair: await repair, message: await message };
        }),
      );
      for (const r of raced) {
        const row = await first.prisma.sagaInstance.findUniqueOrThrow({ where: { id: r.id } });
        const audit = await first.prisma.repairCommand.findMany({ where: { target_id: r.id } });
        expect(audit).toHaveLength(1);
        if (r.repair.ok) {
          tally.repair++;
          expect(row.current_state).toBe('Closed');
          expect(r.message.outcome, 'the message came second and changed nothing').toBe('ignored');
          expect(audit[0]).toMatchObject({ status: 'applied', actual: { state: 'Review', version: r.version } });
        } else {
          tally.message++;
          expect(r.repair.error).toMatchObject({ code: 'repair_conflict', details: { current: { state: 'Open' } } });
          expect(r.message.outcome).toBe('applied');
          expect(row.current_state).toBe('Open');
          expect(audit[0]).toMatchObject({ status: 'conflict', actual: { state: 'Open', version: r.version + 1 } });
        }
        const outbox = await first.prisma.outboxMessage.count({ where: { source_id: r.id, type: 'TicketClosed' } });
        expect(outbox, 'the command queued its message only if it applied').toBe(r.repair.ok ? 1 : 0);
      }
    }
    expect(tally.repair + tally.message).toBe(300);
    console.info(`operator command vs deliver: repair won ${tally.repair}, message won ${tally.message}`);
  });

  it('two operators repairing one step at once: one applied, the other repair_conflict (150 runs)', async () => {
    for (let batch = 0; batch < 6; batch++) {
      const steps = await Promise.all(Array.from({ length: 25 }, () => seedStep(first)));
      const raced = await Promise.all(
        steps.map(async (s) => {
          const cmd = (engine: Engine, n: number) =>
            settle(
              engine.repairs.apply({
                kind: 'run.complete_step',
                target: { runId: s.runId, stepSequence: 1 },
                expected: { runStatus: 'Pending', stepStatus: 'Pending', stepAttempts: 0 },
                output: { operator: n },
                ...who,
                actor: `operator-${n}`,
                idempotencyKey: randomUUID(),
              }),
            );
          const [a, b] = await Promise.all([cmd(operator, 1), cmd(workers, 2)]);
          return { ...s, a, b };
        }),
      );
      for (const r of raced) {
        expect([r.a.ok, r.b.ok].filter(Boolean), 'exactly one operator wins').toHaveLength(1);
        const winner = r.a.ok ? 1 : 2;
        const loser = r.a.ok ? r.b : r.a;
        expect(loser.ok ? null : loser.error).toMatchObject({ code: 'repair_conflict' });
        const step = await first.prisma.actionRun.findUniqueOrThrow({ where: { id: r.id } });
        expect(step).toMatchObject({ status: 'Completed', attempts: 1, output: { operator: winner } });
        const audit = await first.prisma.repairCommand.findMany({
          where: { target_id: `${r.runId}#1` },
          orderBy: { status: 'asc' },
        });
        expect(audit.map((x) => [x.status, x.actor])).toEqual([
          ['applied', `operator-${winner}`],
          ['conflict', `operator-${3 - winner}`],
        ]);
        expect(audit[1]?.actual).toMatchObject({ step: { status: 'Completed', attempts: 1 } });
        const events = await first.prisma.flowEvent.count({ where: { run_id: r.runId, type: 'repair.applied' } });
        expect(events).toBe(1);
      }
    }
  });

  it("reclaim_step racing the dead worker's late completion: exactly one wins, the audit row true (300 runs)", async () => {
    const tally = { repair: 0, worker: 0 };
    for (let batch = 0; batch < 12; batch++) {
      // Each step claimed (attempts 1) by a worker whose row then says it stopped: gone, as far as
      // the engine can tell, yet its action finishes and reports late.
      const steps = await Promise.all(
        Array.from({ length: 25 }, async () => {
          const s = await seedStep(first);
          const workerId = `dead-${randomUUID()}`;
          await beatWorker(first.prisma, { workerId });
          const attempts = await claimStep(first.prisma, { table: 'action_runs', id: s.id, workerId, now: new Date() });
          expect(attempts).toBe(1);
          await stopWorker(first.prisma, { workerId });
          return s;
        }),
      );
      const raced = await Promise.all(
        steps.map(async (s, i) => {
          const repair = settle(
            operator.repairs.apply({
              kind: 'run.reclaim_step',
              target: { runId: s.runId, stepSequence: 1 },
              expected: { runStatus: 'Pending', stepStatus: 'Running', stepAttempts: 1 },
              ...who,
              idempotencyKey: randomUUID(),
            }),
          );
          // Vary who starts first (each order is asserted the same way below).
          if (i % 3 > 0) await sleep(i % 3);
          const late = first.prisma.$transaction(
            (tx) =>
              writePendingOutcome(
                tx,
                {
                  table: 'action_runs',
                  runId: s.runId,
                  rowId: s.id,
                  sequence: 1,
                  name: 'a',
                  attempts: 1,
                  output: { from: 'dead worker' },
                },
                new Date(),
              ),
            lateTx,
          );
          return { ...s, repair: await repair, late: await late };
        }),
      );
      for (const r of raced) {
        const step = await first.prisma.actionRun.findUniqueOrThrow({ where: { id: r.id } });
        const audit = await first.prisma.repairCommand.findMany({ where: { target_id: `${r.runId}#1` } });
        const reclaimed = await first.prisma.flowEvent.count({ where: { run_id: r.runId, type: 'step.reclaimed' } });
        const completed = await first.prisma.flowEvent.count({ where: { run_id: r.runId, type: 'action.completed' } });
        expect(audit).toHaveLength(1);
        expect([r.repair.ok, r.late === 'recorded'].filter(Boolean), 'exactly one wins').toHaveLength(1);
        if (r.repair.ok) {
          tally.repair++;
          expect(r.late, "the dead worker's late completion is rejected").toBe('rejected');
          expect(step).toMatchObject({ status: 'Pending', attempts: 1, claimed_by: null, output: null });
          expect(audit[0]).toMatchObject({ status: 'applied', id: r.repair.value.id });
          expect([reclaimed, completed]).toEqual([1, 0]);
        } else {
          tally.worker++;
          expect(r.repair.error).toMatchObject({ code: 'repair_conflict' });
          expect(step).toMatchObject({ status: 'Completed', attempts: 1, output: { from: 'dead worker' } });
          expect(audit[0]).toMatchObject({
            status: 'conflict',
            actual: { step: { status: 'Completed', attempts: 1 } },
          });
          expect([reclaimed, completed]).toEqual([0, 1]);
        }
      }
    }
    expect(tally.repair + tally.worker).toBe(300);
    console.info(`reclaim_step vs late completion: repair won ${tally.repair}, worker won ${tally.worker}`);
  });

  it("reclaim_step on a compensation racing the dead worker's late completion: one wins, the compensation done once (200 runs)", async () => {
    // This test's runs belong to its own engines: the shared worker pool does not know their flow.
    await workers.stopWorkers();
    const engine = (faults = {}) =>
      createEngine({
        db: first,
        flows: [refundFlow],
        actions: [charge, refund],
        faults,
        logger: pino({ level: 'silent' }),
        config: { worker: { concurrency: 25, poll_interval_ms: 10 }, logging: { anomaly_level: null } },
      });
    const replacement = engine();
    const tally = { repair: 0, worker: 0 };
    for (let batch = 0; batch < 8; batch++) {
      // A worker that dies right after claiming each compensation: the row stays Running, attempt 1.
      const doomed = engine({
        afterClaim: (step: { name: string }) => {
          if (step.name === 'race-refund') throw new SimulatedCrash('the worker died holding the compensation');
        },
      });
      doomed.startWorkers();
      const runs = await Promise.all(
        Array.from({ length: 25 }, async () => {
          const key = randomUUID();
          const { runId } = await doomed.startFlow(refundFlow, { key });
          return { key, runId };
        }),
      );
      const ids = runs.map((r) => r.runId);
      // Progress, not time: every compensation is claimed by the doomed worker.
      const rows = await waitFor('every compensation Running under the doomed worker', async () => {
        const found = await first.prisma.compensationRun.findMany({
          where: { run_id: { in: ids }, status: 'Running' },
        });
        return found.length === runs.length ? new Map(found.map((c) => [c.run_id, c])) : undefined;
      });
      await doomed.stopWorkers();
      const raced = await Promise.all(
        runs.map(async (r, i) => {
          const row = rows.get(r.runId)!;
          expect(row).toMatchObject({ attempts: 1, rollback_level: 1, ordinal: 0 });
          const repair = settle(
            operator.repairs.apply({
              kind: 'run.reclaim_step',
              target: { runId: r.runId, compensation: { rollbackLevel: 1, ordinal: 0 } },
              expected: { runStatus: 'Compensating', stepStatus: 'Running', stepAttempts: 1 },
              ...who,
              idempotencyKey: randomUUID(),
            }),
          );
          // Vary who starts first (each order is asserted the same way below).
          if (i % 3 > 0) await sleep(i % 3);
          const late = first.prisma.$transaction(
            (tx) =>
              writePendingOutcome(
                tx,
                {
                  table: 'compensation_runs',
                  runId: r.runId,
                  rowId: row.id,
                  sequence: row.action_sequence,
                  name: row.name,
                  attempts: 1,
                  level: 1,
                  output: { from: 'dead worker' },
                },
                new Date(),
              ),
            lateTx,
          );
          return { ...r, rowId: row.id, repair: await repair, late: await late };
        }),
      );
      // The dead worker's unacknowledged job comes back (its lease expired): each run is woken either way.
      for (const r of runs)
        await enqueueJob(first.prisma, { kind: 'wake-run', runId: r.runId, availableAt: new Date() });
      replacement.startWorkers();
      await waitFor('every raced run finished', async () => {
        const open = await first.prisma.flowRun.count({ where: { id: { in: ids }, finished_at: null } });
        return open === 0 ? true : undefined;
      });
      await replacement.stopWorkers();
      for (const r of raced) {
        const run = await first.prisma.flowRun.findUniqueOrThrow({ where: { id: r.runId } });
        const row = await first.prisma.compensationRun.findUniqueOrThrow({ where: { id: r.rowId } });
        const audit = await first.prisma.repairCommand.findMany({ where: { target_id: `${r.runId}#rollback-1.0` } });
        const events = await first.prisma.flowEvent.findMany({ where: { run_id: r.runId } });
        const count = (type: string) => events.filter((e) => e.type === type).length;
        expect(run).toMatchObject({ status: 'Completed', output: 'rolled back' });
        expect(audit).toHaveLength(1);
        expect([r.repair.ok, r.late === 'recorded'].filter(Boolean), 'exactly one wins').toHaveLength(1);
        expect(count('compensation.completed'), 'the compensation is recorded done exactly once').toBe(1);
        if (r.repair.ok) {
          tally.repair++;
          expect(r.late, "the dead worker's late completion is rejected").toBe('rejected');
          expect(row).toMatchObject({ status: 'Completed', attempts: 2, output: { from: 'replacement' } });
          expect(undone.get(r.key), 'the replacement ran the compensation once').toBe(1);
          expect(audit[0]).toMatchObject({ status: 'applied', id: r.repair.value.id });
          expect(count('step.reclaimed')).toBe(1);
        } else {
          tally.worker++;
          expect(r.repair.error).toMatchObject({ code: 'repair_conflict', field: 'expected.stepStatus' });
          expect(row).toMatchObject({ status: 'Completed', attempts: 1, output: { from: 'dead worker' } });
          expect(undone.get(r.key), 'nobody ran the compensation again').toBeUndefined();
          expect(audit[0]).toMatchObject({
            status: 'conflict',
            actual: { step: { kind: 'compensation', status: 'Completed', attempts: 1 } },
          });
          expect(count('step.reclaimed')).toBe(0);
        }
      }
    }
    expect(tally.repair + tally.worker).toBe(200);
    console.info(
      `reclaim_step (compensation) vs late completion: repair won ${tally.repair}, worker won ${tally.worker}`,
    );
  });

  it('one idempotency key sent twice at once has one effect, and both calls get its result (100 runs)', async () => {
    const steps = await Promise.all(Array.from({ length: 100 }, () => seedStep(first)));
    await Promise.all(
      steps.map(async (s) => {
        const cmd = {
          kind: 'run.terminate',
          target: { runId: s.runId },
          expected: { runStatus: 'Pending' },
          ...who,
          idempotencyKey: `twice-${s.runId}`,
        } as RepairCommand;
        const [a, b] = await Promise.all([operator.repairs.apply(cmd), workers.repairs.apply(cmd)]);
        expect(a.id).toBe(b.id);
        expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
        expect(await first.prisma.repairCommand.count({ where: { idempotency_key: cmd.idempotencyKey } })).toBe(1);
        expect(await first.prisma.flowEvent.count({ where: { run_id: s.runId, type: 'run.terminated' } })).toBe(1);
      }),
    );
  });

  it('a connection killed while apply waits for the run lock leaves neither the change nor an audit row', async () => {
    const { runId } = await seedStep(first);
    const holder = new pg.Client({ connectionString: first.url });
    const killer = new pg.Client({ connectionString: first.url });
    await holder.connect();
    await killer.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from "sagaflow"."flow_runs" where id = $1 for update', [runId]);
      const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const before = await snapshotTables(first);
      const cmd = {
        kind: 'run.terminate',
        target: { runId },
        expected: { runStatus: 'Pending' },
        ...who,
        idempotencyKey: `killed-${runId}`,
      } as RepairCommand;
      const applying = settle(operator.repairs.apply(cmd));
      // Progress: the repair's backend is waiting for the lock the holder has.
      const pid = await waitFor('the repair waiting on the run lock', async () => {
        const rows = await killer.query<{ pid: number }>(
          `select pid from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and pid <> $1 and query ilike '%flow_runs%'`,
          [holderPid],
        );
        return rows.rows[0]?.pid;
      });
      await killer.query('select pg_terminate_backend($1)', [pid]);
      const outcome = await applying;
      expect(outcome.ok, 'apply failed with its connection').toBe(false);
      expect(outcome.ok ? null : outcome.error).not.toBeInstanceOf(EngineError);
      await holder.query('rollback');
      expect(await snapshotTables(first), 'neither the change nor an audit row').toEqual(before);
      // Nothing was recorded under the key: the same command applies now, once.
      const applied = await operator.repairs.apply(cmd);
      expect(applied).toMatchObject({ status: 'applied', replayed: false });
      expect((await first.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe('Terminated');
    } finally {
      await holder.end();
      await killer.end();
    }
  });

  it('a connection killed mid-apply, after the change and before its audit row, leaves neither', async () => {
    const { runId } = await seedStep(first);
    const holder = new pg.Client({ connectionString: first.url });
    const killer = new pg.Client({ connectionString: first.url });
    await holder.connect();
    await killer.connect();
    try {
      const before = await snapshotTables(first);
      // SHARE mode lets the repair read the audit table (its idempotency check) but not insert into
      // it: the repair locks, checks and terminates the run, appends its history, then waits here.
      await holder.query('begin');
      await holder.query('lock table "sagaflow"."repair_commands" in share mode');
      const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const cmd = {
        kind: 'run.terminate',
        target: { runId },
        expected: { runStatus: 'Pending' },
        ...who,
        idempotencyKey: `killed-mid-${runId}`,
      } as RepairCommand;
      const applying = settle(operator.repairs.apply(cmd));
      const pid = await waitFor('the repair waiting to write its audit row', async () => {
        const rows = await killer.query<{ pid: number }>(
          `select pid from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and pid <> $1
              and query ilike '%repair_commands%'`,
          [holderPid],
        );
        return rows.rows[0]?.pid;
      });
      // The change itself is in: the run row is Terminated in the repair's own (uncommitted) view.
      const locks = await killer.query<{ n: number }>(
        `select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation
          where l.pid = $1 and c.relname = 'flow_runs' and l.mode = 'RowExclusiveLock'`,
        [pid],
      );
      expect(locks.rows[0]?.n, 'the repair had written to flow_runs before it was killed').toBeGreaterThan(0);
      await killer.query('select pg_terminate_backend($1)', [pid]);
      const outcome = await applying;
      expect(outcome.ok, 'apply failed with its connection').toBe(false);
      await holder.query('rollback');
      expect(await snapshotTables(first), 'neither the change nor an audit row').toEqual(before);
      const applied = await operator.repairs.apply(cmd);
      expect(applied).toMatchObject({ status: 'applied', replayed: false });
    } finally {
      await holder.end();
      await killer.end();
    }
  });
});
