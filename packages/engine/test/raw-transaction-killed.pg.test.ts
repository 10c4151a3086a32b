import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow, type Database } from '../src/index.ts';
import type { SqlDriver } from '../src/db/database.ts';
import { rawDb } from '../src/db/raw-db.ts';
import { rawOn } from '../src/db/run-in-transaction.ts';
import { appendFlowEvent } from '../src/store/append-flow-event.ts';
import { createTestEngine, type TestEngine } from '../src/testing/index.ts';
import { seedStep } from './support/seed-step.ts';
import { openTestDatabase } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

/** Ends the server backend a transaction runs on, from another connection, as an operator or a failover would. */
async function terminate(db: Database, pid: number): Promise<void> {
  await db.pool!.query('select pg_terminate_backend($1)', [pid]);
}

describe('a raw run transaction whose connection is killed', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 4 });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('fails, leaves nothing of itself, and the pool serves the next transaction on a live connection', async () => {
    const { runId } = await seedStep(db);
    let killedPid = 0;
    await expect(
      db.driver.transaction(async (session) => {
        const tx = rawDb((s) => session.raw(s));
        await appendFlowEvent(tx, { runId, type: 'probe.before-kill' });
        const [row] = await session.query<{ pid: number }>('select pg_backend_pid() as pid');
        killedPid = row!.pid;
        await terminate(db, killedPid);
        await appendFlowEvent(tx, { runId, type: 'probe.after-kill' });
      }),
    ).rejects.toThrow(/terminat|Connection|closed/i);
    expect(await db.prisma.flowEvent.count({ where: { run_id: runId, type: { startsWith: 'probe.' } } })).toBe(0);
    for (let i = 0; i < 4; i++) {
      const pid = await db.driver.transaction(async (session) => {
        await appendFlowEvent(
          rawDb((s) => session.raw(s)),
          { runId, type: 'probe.after' },
        );
        return (await session.query<{ pid: number }>('select pg_backend_pid() as pid'))[0]?.pid;
      });
      expect(pid).not.toBe(killedPid);
    }
    expect(await db.prisma.flowEvent.count({ where: { run_id: runId, type: 'probe.after' } })).toBe(4);
  });
});

const executions = new Map<number, number>();
/**
 * Set by step 2's action: the next write of the run (step 2's outcome with step 3's claim: one
 * autocommitted statement since ADR 0042, a transaction when that path is not taken) loses its backend.
 */
let killNext = false;
let killed = 0;
const step = defineAction({
  name: 'killed-tx-step',
  run: (n: number) => {
    executions.set(n, (executions.get(n) ?? 0) + 1);
    if (n === 2) killNext = true;
    return Promise.resolve(n);
  },
});
const flow = defineFlow({
  name: 'killed-tx',
  version: 1,
  run: async (ctx) => {
    await ctx.action(step, 1);
    await ctx.action(step, 2);
    return ctx.action(step, 3);
  },
});

describe('a run whose transaction loses its connection mid-way', () => {
  let db: Database;
  let t: TestEngine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 4 });
    const driver: SqlDriver = {
      ...db.driver,
      statement: async (statement, limits) => {
        if (!killNext) return db.driver.statement(statement, limits);
        killNext = false;
        // An autocommitted statement on a connection whose backend is ended just before it is sent.
        const client = await db.pool!.connect();
        // The ended backend's notice may come before the statement is sent: this client expects it.
        client.on('error', () => undefined);
        const [row] = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows;
        await terminate(db, row!.pid);
        killed += 1;
        try {
          return await rawOn(client, statement);
        } finally {
          client.release(true);
        }
      },
      transaction: (fn, limits) =>
        db.driver.transaction(async (session) => {
          if (killNext) {
            killNext = false;
            const [row] = await session.query<{ pid: number }>('select pg_backend_pid() as pid');
            await terminate(db, row!.pid);
            killed += 1;
          }
          return fn(session);
        }, limits),
    };
    t = await createTestEngine({
      db: { ...db, driver },
      flows: [flow],
      actions: [step],
      logger: pino({ level: 'silent' }),
      config: { worker: { concurrency: 2, poll_interval_ms: 50 } },
    });
  });
  afterAll(async () => {
    await t?.close();
    await db?.close();
  });

  it('is carried on by a fresh replay and finishes with one execution and one outcome per step', async () => {
    t.engine.startWorkers();
    const { runId } = await t.engine.startFlow(flow, null);
    const run = await waitFor(
      'the run to finish',
      async () => {
        const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        return r.finished_at ? r : undefined;
      },
      60_000,
    );
    expect(killed).toBe(1);
    expect(run.status).toBe('Completed');
    expect(run.output).toBe(3);
    expect([...executions.entries()].sort()).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
    ]);
    const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    expect(steps.map((s) => [s.sequence, s.status, s.attempts])).toEqual([
      [1, 'Completed', 1],
      [2, 'Completed', 1],
      [3, 'Completed', 1],
    ]);
    const completed = await db.prisma.flowEvent.findMany({
      where: { run_id: runId, type: 'action.completed' },
      orderBy: { id: 'asc' },
    });
    expect(completed.map((e) => e.sequence)).toEqual([1, 2, 3]);
  }, 90_000);
});
