import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { defineFlow } from '../../src/index.ts';
import { executeRun } from '../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { bareEngine, gate } from './harness.ts';

/**
 * Two replays of one run (a duplicate delivery). Replay A records ctx.random() and the signal wait
 * and parks "signal "go" until ...". Replay B, which read the run before A wrote, then meets A's
 * value (ReplayConflict); replay-session.ts:118-121 parks it with waitingFor null and stuckReason
 * null, and park-run.ts overwrites A's reason unconditionally. The run is Waiting and says nothing.
 * (The same overwrite happens with claim_lost's "running on another worker" after the other
 * replay already parked on something else.)
 */
const gates = [gate(), gate()];
const started: number[] = [];
let n = 0;
const flow = defineFlow({
  name: 'random-then-wait',
  version: 1,
  run: async (ctx) => {
    const mine = n++;
    started.push(mine);
    await gates[mine]!.promise; // replay latency
    const r = ctx.random();
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    return r;
  },
});

describe(`regression (review): a stale replay's park replaces the live replay's reason (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    for (const g of gates) g.open();
    await db.close();
  });

  it('a Waiting run keeps saying what it waits for', async () => {
    const e = bareEngine(db, { flows: [flow], actions: [] });
    const { runId } = await e.startFlow(flow, null);
    const pB = executeRun(e.runtime, runId); // B reads the (empty) record first
    while (started.length < 1) await new Promise((r) => setTimeout(r, 5));
    const pA = executeRun(e.runtime, runId);
    while (started.length < 2) await new Promise((r) => setTimeout(r, 5));
    gates[1]!.open(); // A goes first
    expect(await pA).toBe('parked');
    const afterA = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(afterA.waiting_for).toMatch(/^signal "go"/);
    gates[0]!.open(); // then the stale B
    expect(await pB).toBe('parked');
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect({ status: run.status, waitingFor: run.waiting_for, stuck: run.stuck_reason }).toEqual({
      status: 'Waiting',
      waitingFor: afterA.waiting_for,
      stuck: null,
    });
  });
});
