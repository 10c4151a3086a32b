import { defineAction, defineFlow } from '../../../src/index.ts';
import { gate } from '../harness.ts';

/**
 * Reviews 18 and 20: a rollback planned from a record the worker then moves past. A three-step flow
 * (a and b compensated by undo-a and undo-b, then c) whose second invocation (the planning replay) waits
 * at its start at `plan`, and whose steps b and c wait in their actions at `two` and `three`; `undone`
 * lists the compensations run. Names are `<tag>-…`.
 */
export function stalePlanFlow(tag: string) {
  let invocations = 0;
  const plan = { reached: gate(), release: gate() };
  const two = { reached: gate(), release: gate() };
  const three = { reached: gate(), release: gate() };
  const undone: string[] = [];
  const held = (name: string, at: typeof two) =>
    defineAction({
      name: `${tag}-${name}`,
      run: async () => {
        at.reached.open();
        await at.release.promise;
        return name;
      },
    });
  const a = defineAction({ name: `${tag}-a`, run: async () => 'a' });
  const b = held('b', two);
  const c = held('c', three);
  const undoA = defineAction({ name: `${tag}-undo-a`, run: async () => (undone.push('a'), null) });
  const undoB = defineAction({ name: `${tag}-undo-b`, run: async () => (undone.push('b'), null) });
  const flow = defineFlow({
    name: `${tag}-stale-plan`,
    version: 1,
    run: async (ctx) => {
      invocations += 1;
      if (invocations === 2) {
        plan.reached.open();
        await plan.release.promise;
      }
      try {
        await ctx
          .action(a, null)
          .compensateWith(undoA, () => null)
          .run();
        await ctx
          .action(b, null)
          .compensateWith(undoB, () => null)
          .run();
        await ctx.action(c, null).run();
        return 'done';
      } catch (err) {
        await ctx.compensate();
        throw err;
      }
    },
  });
  return { flow, actions: [a, b, c, undoA, undoB], plan, two, three, undone };
}
