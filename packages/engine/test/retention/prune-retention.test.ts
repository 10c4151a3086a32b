import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/errors/engine-error.ts';
import type { PruneProgress } from '../../src/index.ts';
import { openTestEngine } from '../support/open-test-engine.ts';
import { testDbKind } from '../support/test-database.ts';
import { countHistoryByTag, countOrphanRows } from '../../src/testing/count-history.ts';
import { seedRetentionScene } from './retention-fixture.ts';

const thirtyDays = 30 * 86_400;

describe(`retention prunes what is old and finished, and nothing else (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  let before: Record<string, number>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [], actions: [] });
    await seedRetentionScene(t.db.driver, t.clock.now());
    before = await countHistoryByTag(t.db.driver);
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('refuses a bad option naming it, before anything is deleted', async () => {
    for (const [options, field] of [
      [{ olderThanSeconds: 0 }, 'olderThanSeconds'],
      [{ olderThanSeconds: 1.5 }, 'olderThanSeconds'],
      [{ batchSize: 0 }, 'batchSize'],
      [{ batchSize: 10_001 }, 'batchSize'],
    ] as const) {
      const err = await t.engine.retention.prune(options).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EngineError);
      expect(err).toMatchObject({ code: 'invalid_input', field });
    }
    expect(await countHistoryByTag(t.db.driver)).toEqual(before);
  });

  it('a dry run counts what a prune would delete and deletes nothing', async () => {
    const preview = await t.engine.retention.preview({ olderThanSeconds: thirtyDays });
    // 24 old runs + held-done-3 and -4 (their approvals are decided); 1 in 4 of them has a compensation,
    // a signal, a timer and a job (business keys 4, 8, ...: 6 of old-done, held-done-4).
    expect(preview.rows).toEqual({
      flow_runs: 26,
      action_runs: 26 * 5,
      compensation_runs: 7,
      flow_events: 26 * 7,
      signals: 7,
      timers: 7,
      jobs: 7,
      process_transitions: 6 * 5,
      outbox: 15,
      inbox: 12,
      workers: 0,
    });
    expect(await countHistoryByTag(t.db.driver)).toEqual(before);
  });

  it('deletes old finished runs, finished instances’ transitions, published outbox rows and old inbox records in batches; keeps the rest', async () => {
    const progress: PruneProgress[] = [];
    const report = await t.engine.retention.prune({ olderThanSeconds: thirtyDays, batchSize: 5 }, (p) =>
      progress.push(p),
    );
    const after = await countHistoryByTag(t.db.driver);
    const gone = Object.keys(before).filter((k) => !(k in after));
    expect(gone.sort()).toEqual(
      [
        'flow_runs:old-done',
        'action_runs:old-done',
        'flow_events:old-done',
        'process_transitions:old-done-instance',
        'outbox:old-published',
        'inbox:old-done-instance',
      ].sort(),
    );
    const changed = Object.keys(after).filter((k) => after[k] !== before[k]);
    // held-done lost the two runs whose approvals were decided, and kept the two still open.
    expect(changed.sort()).toEqual(['action_runs:held-done', 'flow_events:held-done', 'flow_runs:held-done']);
    expect(after['flow_runs:held-done']).toBe(2);
    expect(after['flow_runs:family']).toBe(2);
    expect(after['saga_instances:old-done-instance']).toBe(6);
    expect(await countOrphanRows(t.db.driver)).toBe(0);

    expect(report.deleted).toEqual(report.planned);
    expect(report.total).toBe(26 + 130 + 7 + 182 + 7 + 7 + 7 + 30 + 15 + 12);
    expect(report.complete).toBe(true);
    // Batches of 5: 6 of runs (the last one short), 6 + 1 of transitions, 3 + 1 of outbox, 3 of inbox, and
    // one of workers, which finds none to delete.
    expect(progress.map((p) => p.phase)).toEqual([
      ...Array<string>(6).fill('runs'),
      ...Array<string>(7).fill('transitions'),
      ...Array<string>(4).fill('outbox'),
      ...Array<string>(3).fill('inbox'),
      'workers',
    ]);
    expect(progress.map((p) => p.done)).toEqual([...progress.map((p) => p.done)].sort((a, b) => a - b));
    expect(progress.at(-1)).toMatchObject({ done: report.total, left: 0 });
    expect(progress[0]?.left).toBe(report.total - (progress[0]?.done ?? 0));
  });

  it('a second prune finds nothing more', async () => {
    const again = await t.engine.retention.prune({ olderThanSeconds: thirtyDays });
    expect(again.total).toBe(0);
    expect((await t.engine.retention.preview({ olderThanSeconds: thirtyDays })).total).toBe(0);
  });
});
