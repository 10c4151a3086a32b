import { describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { testDbKind } from '../../support/test-database.ts';
import { finished, useEngineWithPool } from './use-engine-with-pool.ts';

/**
 * ADR 0048's begun replay runs the flow's code on the input as the caller gave it (keys put in
 * jsonb's order); every replay after the start runs it on the input jsonb gives back. A -0 is
 * accepted (it is a finite number) and stored as 0: code that told the two apart chose its first
 * step on -0 before the start and on 0 after it, so the start wrote a step the run's code never asks
 * for, and the run could not go on.
 */
const ran: string[] = [];
const action = (name: string) =>
  defineAction({
    name,
    run: async () => {
      ran.push(name);
      return name;
    },
  });
const [minusZero, zero] = [action('review10-minus-zero'), action('review10-zero')];
const bySign = defineFlow({
  name: 'review10-by-sign-of-zero',
  version: 1,
  run: async (ctx, input: { n: number }) => ctx.action(Object.is(input.n, -0) ? minusZero : zero, null),
});

describe(`the begun replay of a start sees the numbers its run stores (${testDbKind()})`, () => {
  const pool = useEngineWithPool();

  it('a -0 in the input: the start writes the step every later replay asks for, and the run completes', async () => {
    const { engine } = await pool.start({ flows: [bySign], actions: [minusZero, zero] });
    const db = pool.db();
    const handOffs = engine.workerCounters()!.handOffs;
    const { runId } = await engine.startFlow(bySign, { n: -0 });
    // The start was handed to this pool, so its first step went with it (ADR 0048).
    expect(engine.workerCounters()!.handOffs - handOffs).toBe(1);
    const run = await finished(db, runId, true);
    expect([run.status, run.stuck_reason, run.output]).toEqual(['Completed', null, 'review10-zero']);
    const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId } });
    expect(steps.map((s) => [s.sequence, s.name, s.status, s.attempts])).toEqual([
      [1, 'review10-zero', 'Completed', 1],
    ]);
    expect(ran).toEqual(['review10-zero']);
  });
});
