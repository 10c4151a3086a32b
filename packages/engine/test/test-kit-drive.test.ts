import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction } from '../src/definitions/define-action.ts';
import { defineFlow } from '../src/definitions/define-flow.ts';
import { EngineError } from '../src/errors/engine-error.ts';
import { createTestEngine, type TestEngine } from '../src/testing/create-test-engine.ts';
import { openTestDatabase } from './support/test-database.ts';

const noop = defineAction({ name: 'kit.noop', run: (i: { k: number }) => Promise.resolve({ k: i.k }) });
const napper = defineFlow({
  name: 'kit.napper',
  version: 1,
  run: async (ctx, input: { naps: number }) => {
    for (let k = 0; k < input.naps; k++) {
      await ctx.action(noop, { k }).run();
      await ctx.sleep(3600);
    }
    return { naps: input.naps };
  },
});

/** The test kit's `drive`, as a user's test calls it (packages/engine/README.md, "Testing flows"). */
describe('the test kit drives a run to its end', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await createTestEngine({ flows: [napper], actions: [noop], db: await openTestDatabase() });
  });
  afterAll(async () => {
    await t?.close();
    await t?.db.close();
  });

  it('skips the clock over each sleep and answers the run in full at its end', async () => {
    const done = await t.runToCompletion(napper, { naps: 5 });
    expect(done.run.status).toBe('Completed');
    expect(done.run.output).toEqual({ naps: 5 });
    expect(done.actions.filter((a) => a.name === 'kit.noop').map((a) => a.status)).toEqual(
      Array.from({ length: 5 }, () => 'Completed'),
    );
  });

  it('an id that is no uuid is refused as the engine refuses it: invalid_input naming runId (review 52)', async () => {
    const err = await t.drive('not-a-run').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({ code: 'invalid_input', field: 'runId' });
  });

  it('a uuid that is no run says so', async () => {
    await expect(t.drive('00000000-0000-4000-8000-000000000000')).rejects.toThrow(
      'run 00000000-0000-4000-8000-000000000000 does not exist',
    );
  });
});
