import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { defineAction, defineFlow } from '../../src/index.ts';
import { executeRun } from '../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { bareEngine, gate, within } from './harness.ts';

/**
 * A rolling deploy: a v1 worker and a v2 worker (which renamed step 1) replay the same run at the
 * same time. v2 loaded the run's rows before v1 recorded step 1, so v2 sees step 1 as new, its
 * insert conflicts with v1's row, and action-step.ts:67 recurses without ever updating
 * session.recorded: the same insert, the same conflict, for ever. Expected: replay_blocked.
 */
const a = defineAction({ name: 'charge', run: async () => ({ ok: 1 }) });
const b = defineAction({ name: 'charge-card', run: async () => ({ ok: 2 }) });
const v2Reached = gate();
const v2Go = gate();
const v1 = defineFlow({
  name: 'deployed',
  version: 1,
  run: async (ctx) => {
    await ctx.action(a, null);
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    return 1;
  },
});
const v2 = defineFlow({
  name: 'deployed',
  version: 2,
  run: async (ctx) => {
    v2Reached.open();
    await v2Go.promise; // the replay's own latency; no ctx call has been made yet
    await ctx.action(b, null);
    return 2;
  },
});

describe(`regression (review): an insert that meets another code version's row (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close().catch(() => undefined);
  });

  it('replay-blocks the run instead of retrying the same insert for ever', async () => {
    // On PGlite the loop never yields to the timer queue (every await resolves as a microtask), so a
    // plain timeout cannot stop it: the whole process freezes. The proxy breaks the loop after 200
    // transactions by failing the 201st, which the engine treats as an engine fault (abort).
    let transactions = 0;
    const counted = new Proxy(db.prisma, {
      get(target, prop, recv) {
        if (prop === '$transaction') {
          transactions += 1;
          if (transactions > 200) return () => Promise.reject(new Error('loop detected: 200 transactions'));
        }
        return Reflect.get(target, prop, recv) as unknown;
      },
    });
    const e1 = bareEngine(db, { flows: [v1], actions: [a] });
    const e2 = bareEngine({ ...db, prisma: counted }, { flows: [v2], actions: [b] });
    const { runId } = await e1.startFlow(v1, null);

    const p2 = executeRun(e2.runtime, runId).catch((err: unknown) => (err instanceof Error ? err.message : err));
    await v2Reached.promise; // v2 has read the run's (empty) record
    expect(await executeRun(e1.runtime, runId)).toBe('parked'); // v1 records step 1 and waits
    v2Go.open();

    const outcome = await within(p2, 5000);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect({ outcome, transactionsBelow10: transactions < 10, stuck: run.stuck_reason?.slice(0, 15) ?? null }).toEqual({
      outcome: 'parked',
      transactionsBelow10: true,
      stuck: 'replay_blocked:',
    });
  });
});
