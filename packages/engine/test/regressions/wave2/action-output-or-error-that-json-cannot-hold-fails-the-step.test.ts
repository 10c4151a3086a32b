import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, type Json } from '../../../src/definitions/define-action.ts';
import { defineFlow } from '../../../src/definitions/define-flow.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * Issue 13, items 6 and 8, for actions: an action's output that JSON or jsonb cannot hold exactly
 * (NaN, a lone surrogate, a Date) was stored converted (NaN became null) or could not be stored at
 * all; an error whose message holds a lone surrogate made the failure itself unstorable. The output
 * is the action's failure, recorded with the path named; the error's text is made storable.
 */
describe(`an action's output or error that the database cannot hold as given (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  const outputs: Record<string, () => unknown> = {
    nan: () => ({ total: Number.NaN }),
    surrogate: () => ({ items: ['ok', 'sur-\ud800'] }),
    date: () => ({ at: new Date(0) }),
    bigint: () => ({ n: 10n }),
  };
  const produce = defineAction({
    name: 'wave2.produce',
    run: async (i: { kind: string }) => (outputs[i.kind] ?? (() => null))() as Json,
  });
  const explode = defineAction({
    name: 'wave2.explode',
    run: async () => {
      throw new Error('upstream said "sur-\udfff" and a NUL \u0000');
    },
  });
  const producing = defineFlow({
    name: 'wave2.produce',
    version: 1,
    run: async (ctx, i: { kind: string }) => ctx.action(produce, i),
  });
  const exploding = defineFlow({
    name: 'wave2.explode',
    version: 1,
    run: async (ctx) => ctx.action(explode, {}),
  });

  beforeAll(async () => {
    db = await openTestDatabase();
    t = await createTestEngine({ db, flows: [producing, exploding], actions: [produce, explode] });
  });
  afterAll(async () => {
    await t.close();
    await db.close();
  });

  for (const [kind, path] of [
    ['nan', 'output.total'],
    ['surrogate', 'output.items[1]'],
    ['date', 'output.at'],
    ['bigint', 'output.n'],
  ] as const) {
    it(`${kind}: the step fails, naming ${path}, and the run ends Failed (nothing converted)`, async () => {
      const done = await t.runToCompletion(producing, { kind }, { timeoutMs: 30_000 });
      expect(done.run.status).toBe('Failed');
      const [step] = done.actions;
      expect(step?.status).toBe('Errored');
      expect(step?.output ?? null).toBeNull();
      expect(JSON.stringify(step?.error)).toContain(`${path}:`);
    });
  }

  it('an error message with a lone surrogate and a NUL is recorded, made storable', async () => {
    const done = await t.runToCompletion(exploding, {}, { timeoutMs: 30_000 });
    expect(done.run.status).toBe('Failed');
    const [step] = done.actions;
    expect(step?.status).toBe('Errored');
    const recorded = (step?.error as { message?: string } | null)?.message;
    expect(recorded).toBe('upstream said "sur-\ufffd" and a NUL \ufffd');
  });
});
