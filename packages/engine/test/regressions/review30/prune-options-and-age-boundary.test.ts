import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countHistoryByTag } from '../../../src/testing/count-history.ts';
import { seedHistory } from '../../../src/testing/seed-history.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';

const hour = 3600;

/**
 * ADR 0027: "a bad option is `invalid_input` naming it, before any read", and a run is pruned when
 * its `finished_at` is BEFORE the cutoff `now − older_than`. The options the existing tests do not
 * try (NaN, negative, infinite, a numeric string, past the ten-year limit, on `preview` too), and the
 * boundary to the millisecond: a run finished exactly at the cutoff stays, one a millisecond older goes.
 */
describe(`retention's options and its age boundary (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [], actions: [] });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('refuses NaN, negative, infinite, string and too-large options naming them, in prune and preview; deletes nothing', async () => {
    await seedHistory(t.db.driver, {
      tag: 'ancient',
      at: new Date(t.clock.now().getTime() - 400 * 86_400_000),
      runs: 3,
    });
    const before = await countHistoryByTag(t.db.driver);
    const bad = [
      { olderThanSeconds: Number.NaN },
      { olderThanSeconds: -hour },
      { olderThanSeconds: Number.POSITIVE_INFINITY },
      { olderThanSeconds: '3600' },
      { olderThanSeconds: 10 * 365 * 86_400 + 1 },
      { olderThanSeconds: Number.MAX_SAFE_INTEGER + 2 },
      { batchSize: Number.NaN },
      { batchSize: -5 },
      { batchSize: 2.5 },
      { batchSize: '100' },
    ];
    const answers = [];
    for (const options of bad)
      for (const call of [(o: never) => t.engine.retention.prune(o), (o: never) => t.engine.retention.preview(o)])
        answers.push(
          await call(options as never).then(
            () => 'accepted',
            (e: unknown) => `${(e as { code?: string }).code} ${(e as { field?: string }).field}`,
          ),
        );
    expect(answers).toEqual(
      bad.flatMap((o) => {
        const field = Object.keys(o)[0];
        return [`invalid_input ${field}`, `invalid_input ${field}`];
      }),
    );
    expect(await countHistoryByTag(t.db.driver)).toEqual(before);
    // The largest age allowed is taken and keeps runs younger than ten years.
    expect((await t.engine.retention.prune({ olderThanSeconds: 10 * 365 * 86_400 })).deleted.flow_runs).toBe(0);
  });

  it('a run finished exactly at the cutoff stays; one finished a millisecond before it goes', async () => {
    const cutoff = t.clock.now().getTime() - hour * 1000;
    await seedHistory(t.db.driver, { tag: 'at-cutoff', at: new Date(cutoff), runs: 1 });
    await seedHistory(t.db.driver, { tag: 'just-before', at: new Date(cutoff - 1), runs: 1 });
    await seedHistory(t.db.driver, { tag: 'just-after', at: new Date(cutoff + 1), runs: 1 });
    const preview = await t.engine.retention.preview({ olderThanSeconds: hour });
    expect(preview.cutoff).toBe(new Date(cutoff).toISOString());
    await t.engine.retention.prune({ olderThanSeconds: hour });
    const left = await t.db.prisma.flowRun.findMany({
      where: { flow_name: { in: ['at-cutoff', 'just-before', 'just-after'] } },
      select: { flow_name: true },
      orderBy: { flow_name: 'asc' },
    });
    expect(left.map((r) => r.flow_name)).toEqual(['at-cutoff', 'just-after']);
  });
});
