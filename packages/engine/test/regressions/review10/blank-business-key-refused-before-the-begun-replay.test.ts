import { describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { testDbKind } from '../../support/test-database.ts';
import { finished, useEngineWithPool } from './use-engine-with-pool.ts';

/**
 * Migration 0024 made the reject-duplicate index partial (`WHERE business_key IS NOT NULL`): an empty
 * key is not NULL, so the index would hold it like any other, and two starts with '' would meet as
 * duplicates. The engine never lets it get there: a blank key is refused as `invalid_input` naming
 * `businessKey` before anything runs, including the begun replay of ADR 0048 (the flow's code), on a
 * start handed to its own pool; a start without a key is NULL and never conflicts.
 */
const codeRan: string[] = [];
const step = defineAction({ name: 'review10-key-step', run: async () => 'done' });
const keyed = defineFlow({
  name: 'review10-keyed',
  version: 1,
  run: async (ctx, input: { mark: string }) => {
    codeRan.push(input.mark);
    return ctx.action(step, null);
  },
});

describe(`a blank business key on a start handed to its own pool (${testDbKind()})`, () => {
  const pool = useEngineWithPool();

  it('is refused naming businessKey before the flow code runs, and writes nothing; keyless starts never conflict', async () => {
    const { engine } = await pool.start({ flows: [keyed], actions: [step] });
    const db = pool.db();
    for (const key of ['', '   ', '\t\n']) {
      await expect(
        engine.startFlow(keyed, { mark: `blank:${JSON.stringify(key)}` }, { businessKey: key }),
      ).rejects.toMatchObject({
        code: 'invalid_input',
        field: 'businessKey',
        message: 'businessKey: must not be blank',
      });
    }
    expect(codeRan).toEqual([]);
    expect(await db.prisma.flowRun.count({ where: { flow_name: keyed.name } })).toBe(0);

    const [a, b] = await Promise.all([engine.startFlow(keyed, { mark: 'a' }), engine.startFlow(keyed, { mark: 'b' })]);
    for (const { runId } of [a, b]) expect((await finished(db, runId)).status).toBe('Completed');
    const runs = await db.prisma.flowRun.findMany({ where: { flow_name: keyed.name } });
    expect(runs.map((r) => r.business_key)).toEqual([null, null]);
  });
});
