import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageRunCompensations, pageRunEvents, pageRunSteps, readRunChanges, readRunHead } from '../../src/index.ts';
import { openTestEngine } from '../support/open-test-engine.ts';
import { testDbKind } from '../support/test-database.ts';
import {
  digitBoundaryIds,
  insertEventsWithIds,
  insertInstance,
  insertRun,
  recordSteps,
  recordTransitions,
} from './history-fixture.ts';

/** What the console's run page asks `runs.get` for (ADR 0035). */
const headSizes = { steps: 50, compensations: 50, events: 100, anomalies: 200, stuckEvents: 200 };

/** Generated ids start past this, so ids a test picks below it never collide with them. */
const generatedFrom = 200_000;

/**
 * Issue 12 §1 / ADR 0035: a run's and an instance's history read a page at a time, newest first, by
 * a keyset cursor on a unique order (sequence, (level, ordinal), bigint id), reach every row exactly
 * once, also while the run or instance keeps writing between pages.
 */
describe(`run and instance history pages (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [], actions: [] });
    await t.db.driver.exec(
      `select setval(pg_get_serial_sequence('"sagaflow"."flow_events"', 'id'), ${generatedFrom});
       select setval(pg_get_serial_sequence('"sagaflow"."process_transitions"', 'id'), ${generatedFrom});`,
    );
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('a run with 1,200 steps is reached whole, newest first, each step once, while it records 10 more between pages', async () => {
    const runId = await insertRun(t.db.driver, 'paging.long');
    await recordSteps(t.db.driver, runId, 1, 1200);
    const seen: number[] = [];
    let before: number | undefined;
    let next = 1201;
    for (let pages = 0; ; pages++) {
      expect(pages, 'paging does not end').toBeLessThan(100);
      const page = await pageRunSteps(t.db, runId, { before, limit: 50 });
      seen.push(...page.rows.map((s) => s.sequence));
      // The run goes on between pages: new steps land above every page already read.
      await recordSteps(t.db.driver, runId, next, next + 9);
      next += 10;
      if (!page.more) break;
      before = page.rows.at(-1)!.sequence;
    }
    expect(seen).toEqual(Array.from({ length: 1200 }, (_, i) => 1200 - i));
    // And the newer side, read forward from the newest held, reaches everything recorded since.
    const since: number[] = [];
    let after = 1200;
    for (;;) {
      const page = await pageRunSteps(t.db, runId, { after, limit: 50 });
      since.push(...page.rows.map((s) => s.sequence));
      if (!page.more) break;
      after = page.rows.at(-1)!.sequence;
    }
    expect(since).toEqual(Array.from({ length: next - 1201 }, (_, i) => 1201 + i));
  });

  it('events page newest first in bigint order across digit boundaries (9, 10, 99, 100, ...), never text order', async () => {
    const runId = await insertRun(t.db.driver, 'paging.digits');
    await insertEventsWithIds(t.db.driver, runId, digitBoundaryIds);
    const seen: string[] = [];
    let before: bigint | undefined;
    for (;;) {
      const page = await pageRunEvents(t.db, runId, { before, limit: 3 });
      seen.push(...page.rows.map((e) => e.id));
      if (!page.more) break;
      before = BigInt(page.rows.at(-1)!.id);
    }
    expect(seen).toEqual(digitBoundaryIds.toReversed().map(String));
    const forward = await pageRunEvents(t.db, runId, { after: 99n, limit: 3 });
    expect(forward.rows.map((e) => e.id)).toEqual(['100', '101', '998']);
  });

  it('events page without a gap or a repeat while the run keeps appending between pages', async () => {
    const runId = await insertRun(t.db.driver, 'paging.events');
    await recordSteps(t.db.driver, runId, 1, 300);
    const all = async () => (await pageRunEvents(t.db, runId, { limit: 500 })).rows.map((e) => e.id);
    const existing = await all();
    const seen: string[] = [];
    let before: bigint | undefined;
    let next = 301;
    for (;;) {
      const page = await pageRunEvents(t.db, runId, { before, limit: 40 });
      seen.push(...page.rows.map((e) => e.id));
      await recordSteps(t.db.driver, runId, next, next + 4);
      next += 5;
      if (!page.more) break;
      before = BigInt(page.rows.at(-1)!.id);
    }
    // `existing` was read before any page; rows appended later are newer than all of it.
    expect(seen).toEqual(existing);
    expect(new Set(seen).size).toBe(300);
  });

  it('compensations page by (rollback level, ordinal) across levels, newest first, each once', async () => {
    const runId = await insertRun(t.db.driver, 'paging.rollback');
    await t.db.driver.query(
      `insert into "sagaflow"."compensation_runs" (run_id, action_sequence, rollback_level, ordinal, name, input)
       select $1::uuid, o + 1, l, o, 'undo-' || l || '.' || o, '{}'::jsonb
         from generate_series(0, 2) l, generate_series(0, 11) o`,
      [runId],
    );
    const seen: string[] = [];
    let before: { level: number; ordinal: number } | undefined;
    for (;;) {
      const page = await pageRunCompensations(t.db, runId, { before, limit: 5 });
      seen.push(...page.rows.map((c) => `${c.rollbackLevel}.${c.ordinal}`));
      if (!page.more) break;
      const last = page.rows.at(-1)!;
      before = { level: last.rollbackLevel, ordinal: last.ordinal };
    }
    const expected = [2, 1, 0].flatMap((l) => Array.from({ length: 12 }, (_, i) => `${l}.${11 - i}`));
    expect(seen).toEqual(expected);
    const forward = await pageRunCompensations(t.db, runId, { after: { level: 0, ordinal: 11 }, limit: 2 });
    expect(forward.rows.map((c) => `${c.rollbackLevel}.${c.ordinal}`)).toEqual(['1.0', '1.1']);
  });

  it('the head carries the newest page of each part and says older rows remain; changes carry only what is newer', async () => {
    const runId = await insertRun(t.db.driver, 'paging.poll');
    await recordSteps(t.db.driver, runId, 1, 120);
    const head = await readRunHead(t.db, runId, headSizes);
    expect(head?.steps.rows.map((s) => s.sequence)).toEqual(Array.from({ length: 50 }, (_, i) => 120 - i));
    expect(head?.steps.more).toBe(true);
    expect(head?.events.rows).toHaveLength(100);
    expect(head?.events.more).toBe(true);
    const newestEvent = BigInt(head!.events.rows[0]!.id);
    const oldestEvent = BigInt(head!.events.rows.at(-1)!.id);

    await recordSteps(t.db.driver, runId, 121, 123);
    await t.db.driver.query(
      `update "sagaflow"."action_runs" set status = 'Errored' where run_id = $1::uuid and sequence = 120`,
      [runId],
    );
    const changes = await readRunChanges(t.db, runId, {
      steps: { after: 120, from: 71, open: [120] },
      events: { after: newestEvent, from: oldestEvent },
      compensations: { open: [] },
      anomalies: {},
      limit: 200,
    });
    expect(changes?.newSteps.rows.map((s) => s.sequence)).toEqual([121, 122, 123]);
    expect(changes?.openSteps.map((s) => [s.sequence, s.status])).toEqual([[120, 'Errored']]);
    expect(changes?.newEvents.rows).toHaveLength(3);
    // What the reader holds plus what is new: nothing missing.
    expect(changes?.heldFrom).toEqual({ steps: 50 + 3, events: 100 + 3 });
  });

  it('the head carries every stuck episode, also one older than its newest page of events', async () => {
    const runId = await insertRun(t.db.driver, 'paging.stuck');
    const mark = (type: string, reason: string) =>
      t.db.driver.query(
        `insert into "sagaflow"."flow_events" (run_id, type, data) values ($1::uuid, $2, jsonb_build_object('reason', $3::text))`,
        [runId, type, reason],
      );
    await mark('run.stuck', 'owner_gone: w1');
    await mark('run.unstuck', 'owner_gone: w1');
    await recordSteps(t.db.driver, runId, 1, 150);
    await mark('run.stuck', 'replay_blocked: step 151');
    const head = await readRunHead(t.db, runId, headSizes);
    // The newest 100 events hold only the last episode's start: the first episode is older.
    expect(head?.events.rows.filter((e) => e.type.startsWith('run.')).map((e) => e.type)).toEqual(['run.stuck']);
    expect(head?.stuckEvents.map((e) => [e.type, (e.data as { reason: string }).reason])).toEqual([
      ['run.stuck', 'replay_blocked: step 151'],
      ['run.unstuck', 'owner_gone: w1'],
      ['run.stuck', 'owner_gone: w1'],
    ]);
    // Another run's episodes are not this run's.
    const other = await readRunHead(t.db, await insertRun(t.db.driver, 'paging.calm'), headSizes);
    expect(other?.stuckEvents).toEqual([]);
  });

  it('changes count a row that committed behind a newer one the reader already saw, so the reader reads again', async () => {
    const runId = await insertRun(t.db.driver, 'paging.late');
    await insertEventsWithIds(t.db.driver, runId, [150_000, 150_002]);
    const held = { after: 150_002n, from: 150_000n };
    // A parallel step's event took id 150001 first and committed last.
    await insertEventsWithIds(t.db.driver, runId, [150_001]);
    const changes = await readRunChanges(t.db, runId, {
      steps: { open: [] },
      events: held,
      compensations: { open: [] },
      anomalies: {},
      limit: 200,
    });
    expect(changes?.newEvents.rows).toEqual([]);
    expect(changes?.heldFrom.events).toBe(3);
  });

  it('an instance’s history pages newest first across digit boundaries, each transition once, while it keeps transitioning', async () => {
    const digits = await insertInstance(t.db.driver, 'digits');
    await recordTransitions(t.db.driver, digits, { ids: digitBoundaryIds });
    const byDigits: string[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await t.engine.processes.history(digits, { limit: 3, before });
      byDigits.unshift(...page.transitions.map((r) => r.id));
      if (!page.truncated) break;
      before = page.transitions[0]!.id;
    }
    expect(byDigits).toEqual(digitBoundaryIds.map(String));

    const moving = await insertInstance(t.db.driver, 'moving');
    await recordTransitions(t.db.driver, moving, { count: 2000 });
    const first = await t.engine.processes.history(moving, { limit: 1000 });
    const second = await t.engine.processes.history(moving, { limit: 1000, before: first.transitions[0]!.id });
    const existing = [...second.transitions, ...first.transitions].map((r) => r.id);
    expect(second.truncated).toBe(false);
    const seen: string[] = [];
    before = undefined;
    let pages = 0;
    for (;;) {
      const page = await t.engine.processes.history(moving, { limit: 70, before });
      seen.unshift(...page.transitions.map((r) => r.id));
      await recordTransitions(t.db.driver, moving, { count: 7 });
      pages++;
      if (!page.truncated) break;
      before = page.transitions[0]!.id;
    }
    expect(seen).toEqual(existing);
    expect(new Set(seen).size).toBe(2000);
    const newer = await t.engine.processes.history(moving, { limit: 1000, after: existing.at(-1) });
    expect(newer.transitions).toHaveLength(pages * 7);
  });

  it('refuses a transition cursor that is not an id, naming the option', async () => {
    const id = await insertInstance(t.db.driver, 'refuse');
    await expect(t.engine.processes.history(id, { before: '12a' })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(t.engine.processes.history(id, { after: '99999999999999999999' })).rejects.toThrow(/after/);
  });
});
