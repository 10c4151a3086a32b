import { describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { bareEngine } from '../harness.ts';
import { useProxiedDatabase } from './cut-after-commit-proxy.ts';

/**
 * ADR 0045: a batch of step transitions whose answer is lost after it committed (the first step's
 * outcome recorded, the second step's row inserted claimed by this worker). The replay never learns
 * that it won: each of the batch's runs gets the connection's error, as a lone transition would
 * (resent alone, it found its outcome already recorded and took the transaction path as if it had
 * lost its claim). Either way no action may run twice, no event may be written twice, and the runs
 * the batch did not carry go on untouched.
 */
const marks = ['lost-a', 'lost-b', 'lost-c', 'lost-d'];
const second = /lost-[a-d]-second/g;
const executed = new Map<string, number>();
/** The first steps end together once all have begun, so their runs' transitions arrive together. */
let begun = 0;
let allBegun!: () => void;
const together = new Promise<void>((resolve) => (allBegun = resolve));
const step = (name: string) =>
  defineAction({
    name,
    run: async (input: { mark: string }) => {
      executed.set(`${input.mark}:${name}`, (executed.get(`${input.mark}:${name}`) ?? 0) + 1);
      if (name === 'lost-one') {
        if (++begun === marks.length) allBegun();
        await together;
      }
      return { done: name };
    },
  });
const [one, two] = [step('lost-one'), step('lost-two')];
const flow = defineFlow({
  name: 'answer-lost-transition',
  version: 1,
  run: async (ctx, input: { mark: string }) => {
    await ctx.action(one, input);
    return ctx.action(two, { mark: `${input.mark}-second` });
  },
});
describe('a batch of transitions whose answer is lost after the commit (PostgreSQL)', () => {
  const { direct, proxy, proxied } = useProxiedDatabase(6);

  it('runs no step twice and writes no event twice; a step claimed in the lost batch stays claimed, never run', async () => {
    const clock = new TestClock();
    const e = bareEngine(proxied(), { flows: [flow], actions: [one, two], clock });
    const ids = (await Promise.all(marks.map((mark) => e.startFlow(flow, { mark })))).map((s) => s.runId);
    // The first transition into the second step that carries two or more runs.
    const cut = proxy().cutAfter((sent) => (sent.match(second) ?? []).length >= 2);
    const made: { sent?: string } = {};
    void cut.then((sent) => (made.sent = sent));
    const first = await Promise.allSettled(ids.map((id) => executeRun(e.runtime, id)));
    // The cut is made (the server's answer read) before the client meets the broken socket.
    const { sent } = made;
    if (sent === undefined) throw new Error('no transition statement carried two runs: nothing was cut');
    const inCut = marks.filter((mark) => sent.includes(`${mark}-second`));
    expect(inCut.length, 'the cut statement carried several runs').toBeGreaterThan(1);

    // Replayed again, past every lease, until each run has ended or waits.
    for (let round = 0; round < 3; round += 1) {
      const open = await direct().prisma.flowRun.findMany({ where: { id: { in: ids }, finished_at: null } });
      if (open.length === 0) break;
      clock.advance(3_600_000);
      await Promise.allSettled(open.map((r) => executeRun(e.runtime, r.id)));
    }

    const fates = [];
    for (const [n, id] of ids.entries()) {
      const mark = marks[n]!;
      const run = await direct().prisma.flowRun.findUniqueOrThrow({ where: { id } });
      const events = await direct().prisma.flowEvent.findMany({ where: { run_id: id }, orderBy: { id: 'asc' } });
      const rows = await direct().prisma.actionRun.findMany({ where: { run_id: id }, orderBy: { sequence: 'asc' } });
      fates.push({
        mark,
        firstReplay: first[n]!.status,
        status: run.status,
        history: events.map((ev) => (ev.sequence === null ? ev.type : `${ev.type}#${ev.sequence}`)),
        rows: rows.map((r) => [r.sequence, r.status, r.attempts]),
        executed: [executed.get(`${mark}:lost-one`), executed.get(`${mark}-second:lost-two`)],
      });
    }
    const opening = ['run.started', 'run.running', 'action.started#1', 'action.completed#1', 'action.started#2'];
    expect(fates).toEqual(
      marks.map((mark) =>
        inCut.includes(mark)
          ? // Its step claimed by a batch whose answer never came: the replay cannot know it won, so
            // it runs nothing, and the row waits, Running, for its worker to be gone (an orphan).
            {
              mark,
              firstReplay: 'rejected',
              status: 'Waiting',
              history: opening,
              rows: [
                [1, 'Completed', 1],
                [2, 'Running', 1],
              ],
              executed: [1, undefined],
            }
          : {
              mark,
              firstReplay: 'fulfilled',
              status: 'Completed',
              history: [...opening, 'action.completed#2', 'run.completed'],
              rows: [
                [1, 'Completed', 1],
                [2, 'Completed', 1],
              ],
              executed: [1, 1],
            },
      ),
    );
  });
});
