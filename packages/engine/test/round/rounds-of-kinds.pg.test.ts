import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { createDatabase, defineFlow } from '../../src/index.ts';
import type { FusableDeps } from '../../src/runtime/replay/fused-outcome.ts';
import { finishInBatch, transitionInBatch } from '../../src/runtime/run-statement-batches.ts';
import { activeRun } from '../support/active-run.ts';
import { countStatements } from '../support/count-statements.ts';
import {
  activeLones,
  historyOf,
  loneClaims,
  readyToFinish,
  sentAlone,
  sentKinds,
  settleAfterLones,
  stepClaim,
} from '../support/round-items.ts';
import { bareEngine } from '../regressions/harness.ts';
import { startCutAfterCommitProxy, type CutAfterCommitProxy } from '../regressions/review9/cut-after-commit-proxy.ts';
import { openTestDatabase } from '../support/test-database.ts';

/**
 * ADR 0066: transitions and finishes waiting at one moment go in ONE round, one transaction in one
 * round trip. Each item below is submitted the way the replay submits it; the first ones of a moment go
 * alone at once (two may be out while none is slow, ADR 0076), and the two that arrive while they are
 * out (a transition and a finish) go together.
 */
const worker = 'round-test-worker';
const flow = defineFlow({ name: 'round-kinds', version: 1, run: async () => null });

describe('rounds of several kinds (PostgreSQL)', () => {
  // The engine's handle goes through a proxy that can cut a round's answer after its commit, and sends rounds.
  let handles: { direct: Database & { url?: string }; proxy: CutAfterCommitProxy; proxied: Database } | undefined;
  beforeAll(async () => {
    const directDb = await openTestDatabase();
    const proxyServer = await startCutAfterCommitProxy(directDb.url!);
    const proxiedDb = await createDatabase({
      kind: 'postgres',
      url: proxyServer.url,
      poolSize: 4,
      statementRounds: true,
    });
    handles = { direct: directDb, proxy: proxyServer, proxied: proxiedDb };
  });
  afterAll(async () => {
    await handles?.proxied.close();
    await handles?.proxy.close();
    await handles?.direct.close();
  });
  const direct = () => handles!.direct;
  const proxy = () => handles!.proxy;
  const proxied = () => handles!.proxied;

  const engineOn = (db: Database) => bareEngine(db, { flows: [flow], actions: [] }).runtime as FusableDeps;
  it('a transition and a finish waiting together commit in one transaction, in one round trip', async () => {
    const counted = countStatements(proxied());
    const deps = engineOn(counted.db);
    const [lones, a] = await Promise.all([
      activeLones(direct(), 'round', worker),
      activeRun(direct(), 'round-a', worker),
    ]);
    const b = await readyToFinish(counted.db, await activeRun(direct(), 'round-b', worker), worker, { b: true });
    counted.sent.length = 0;
    const firsts = await loneClaims(deps, worker, lones);
    const [moved, finished] = await Promise.all([
      transitionInBatch(deps, stepClaim(worker, a, 1)),
      finishInBatch(deps, b),
    ]);
    for (const first of await Promise.all(firsts))
      expect(first).toMatchObject({ runOpen: true, row: { sequence: 1, status: 'Running' } });
    expect(moved).toMatchObject({ runOpen: true, row: { sequence: 1, status: 'Running' } });
    expect(finished).toBe('Completed');
    // The lone ones went by themselves; a's transition and b's finish in one round.
    expect(sentKinds(counted.sent)).toEqual([...sentAlone(), ['transitions', 1], ['finishes', 1]]);
    // One transaction: a's action.started and b's run.completed were written under one xid.
    const xids = await direct().prisma.$queryRaw<{ run_id: string; type: string; xid: string }[]>`
      select run_id::text, type, xmin::text as xid from "sagaflow"."flow_events"
      where (run_id = ${a}::uuid and type = 'action.started') or (run_id = ${b.runId}::uuid and type = 'run.completed')`;
    expect(xids).toHaveLength(2);
    expect(new Set(xids.map((x) => x.xid)).size).toBe(1);
  });

  it('a round whose finish the server refuses writes nothing, and each item then meets its own fate alone', async () => {
    const counted = countStatements(proxied());
    const deps = engineOn(counted.db);
    const [lones, a] = await Promise.all([
      activeLones(direct(), 'refused', worker),
      activeRun(direct(), 'refused-a', worker),
    ]);
    // jsonb cannot hold a NUL: the finish, the round's second statement, is refused after the
    // transition (its first) has run in the same transaction.
    const bad = await readyToFinish(counted.db, await activeRun(direct(), 'refused-b', worker), worker, {
      text: 'nul\u0000here',
    });
    counted.sent.length = 0;
    const [first, moved, finished] = await settleAfterLones(await loneClaims(deps, worker, lones), [
      transitionInBatch(deps, stepClaim(worker, a, 1)),
      finishInBatch(deps, bad),
    ]);
    expect(first.status).toBe('fulfilled');
    // Sent again alone, a's transition claims step 1 afresh: the round's own write of it was rolled back
    // (had it stayed, the resend would have found step 1 taken and claimed nothing).
    expect(moved).toMatchObject({ status: 'fulfilled', value: { runOpen: true, row: { sequence: 1, attempts: 1 } } });
    expect(finished).toMatchObject({ status: 'rejected', reason: { code: '22P05' } });
    expect(sentKinds(counted.sent)).toEqual([
      ...sentAlone(),
      ['transitions', 1],
      ['finishes', 1],
      ['transitions', null],
      ['finishes', null],
    ]);
    expect(await historyOf(direct(), a)).toEqual(['run.started', 'run.running', 'action.started#1']);
    expect(await historyOf(direct(), bad.runId)).toEqual(['run.started', 'run.running', 'action.started#1']);
    expect(await direct().prisma.actionRun.count({ where: { run_id: a } })).toBe(1);
    expect((await direct().prisma.flowRun.findUniqueOrThrow({ where: { id: bad.runId } })).status).toBe('Running');
  });

  it("a round whose answer is lost after its commit gives every item the connection's error and writes nothing twice", async () => {
    const deps = engineOn(proxied());
    const [lones, a] = await Promise.all([
      activeLones(direct(), 'lost', worker),
      activeRun(direct(), 'lost-a', worker),
    ]);
    const b = await readyToFinish(proxied(), await activeRun(direct(), 'lost-b', worker), worker, {
      mark: 'round-cut-mark',
    });
    // Both items' values in one write: the round (a connection that prepared the texts sends only their names).
    const cut = proxy().cutAfter((sent) => sent.includes('round-cut-mark') && sent.includes('lost-a-step'));
    const [first, moved, finished] = await settleAfterLones(await loneClaims(deps, worker, lones), [
      transitionInBatch(deps, stepClaim(worker, a, 1, 'lost-a-step')),
      finishInBatch(deps, b),
    ]);
    const sent = await cut;
    expect(sent, 'the cut round carried the transition and the finish').toContain('lost-a-step');
    expect(first.status).toBe('fulfilled');
    expect(moved.status).toBe('rejected');
    expect(finished.status).toBe('rejected');
    expect((moved as PromiseRejectedResult).reason).toBe((finished as PromiseRejectedResult).reason);
    // The round committed once; neither item was sent again.
    expect(await historyOf(direct(), a)).toEqual(['run.started', 'run.running', 'action.started#1']);
    expect(await historyOf(direct(), b.runId)).toEqual([
      'run.started',
      'run.running',
      'action.started#1',
      'action.completed#1',
      'run.completed',
    ]);
    expect(await direct().prisma.actionRun.count({ where: { run_id: a } })).toBe(1);
  });
});
