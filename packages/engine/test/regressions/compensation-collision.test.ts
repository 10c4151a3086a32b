import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow, NonRetryableError } from '../../src/index.ts';
import { openTestEngine } from '../support/open-test-engine.ts';
import { testDbKind } from '../support/test-database.ts';

/**
 * ctx.addCompensation() records the compensation under action_sequence = session.sequence, the
 * same sequence the last step's compensateWith() uses (create-flow-context.ts:182). Compensation
 * rows are unique on (run, action_sequence, level) and inserted "on conflict do nothing"
 * (insert-compensation.ts:21), so one of the two is silently dropped and the survivor is run twice
 * over (the second time as a lost claim). The same happens for two addCompensation() calls in a row.
 */
const log: string[] = [];
const book = defineAction({ name: 'book', run: async () => (log.push('book'), { id: 'b-1' }) });
const cancelBooking = defineAction({
  name: 'cancel-booking',
  run: async (i: { id: string }) => (log.push(`cancel ${i.id}`), { ok: true }),
});
const notify = defineAction({
  name: 'notify-customer',
  run: async (i: { text: string }) => (log.push(`notify ${i.text}`), { ok: true }),
});
const explode = defineAction({
  name: 'explode',
  run: async () => {
    throw new NonRetryableError('boom');
  },
});

const withBoth = defineFlow({
  name: 'compensate-with-and-add',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx.action(book, null).compensateWith(cancelBooking, (o) => ({ id: o.id }));
      ctx.addCompensation(notify, { text: 'your booking was undone' });
      await ctx.action(explode, null);
      return null;
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});
const twoAdds = defineFlow({
  name: 'two-adds',
  version: 1,
  run: async (ctx) => {
    try {
      const r = await ctx.action(book, null);
      ctx.addCompensation(cancelBooking, { id: r.id });
      ctx.addCompensation(notify, { text: 'undone' });
      await ctx.action(explode, null);
      return null;
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe(`regression (review): two compensations registered after one step (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [withBoth, twoAdds], actions: [book, cancelBooking, notify, explode] });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('compensateWith() + addCompensation(): both compensations run, newest first', async () => {
    log.length = 0;
    const d = await t.runToCompletion(withBoth, null);
    expect(d.compensations.map((c) => c.name)).toEqual(['notify-customer', 'cancel-booking']);
    expect(log).toEqual(['book', 'notify your booking was undone', 'cancel b-1']);
  });

  it('two addCompensation() calls after one step: both run', async () => {
    log.length = 0;
    const d = await t.runToCompletion(twoAdds, null);
    expect(d.compensations.map((c) => c.name)).toEqual(['notify-customer', 'cancel-booking']);
    expect(log).toEqual(['book', 'notify undone', 'cancel b-1']);
  });
});
