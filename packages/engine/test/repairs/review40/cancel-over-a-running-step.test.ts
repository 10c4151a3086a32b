import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { waitFor } from '../../support/wait-for.ts';
import { fuzzActions, gates, saga, scripts, undone, who } from './support/fuzz-saga.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

describe('review 40: cancel and expire drafted while a live worker holds step 2', () => {
  let t!: T;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [saga], actions: fuzzActions });
    t.engine.startWorkers();
  });
  afterAll(async () => {
    for (const g of gates.values()) g(true);
    await t?.closeAll();
  });

  for (const kind of ['run.cancel', 'run.expire'] as const)
    it(`${kind} over a Running step 2 that then succeeds: compensations newest first for what completed, each once`, async () => {
      const key = randomUUID();
      scripts.set(key, { steps: ['ok', 'gate', 'ok'] });
      const { runId } = await t.engine.startFlow(saga, { key });
      const gate = await waitFor('the worker at step 2 gate', async () => gates.get(`${key}:2`));
      gates.delete(`${key}:2`);
      const r = await t.engine.repairs.apply({
        kind,
        target: { runId },
        expected: { runStatus: 'Running' },
        ...who,
        idempotencyKey: randomUUID(),
      });
      expect(r.status).toBe('applied');
      gate(true);
      const done = await t.drive(runId);
      const mine = undone.filter((u) => u.startsWith(`${key}:`)).map((u) => Number(u.split(':')[1]));
      const history = done.events.map((e) => e.type).join(', ');
      if (process.env.R40_LOG)
        console.info(
          kind,
          done.run.status,
          JSON.stringify(done.actions.map((a) => [a.sequence, a.status])),
          mine,
          JSON.stringify(done.compensations.map((c) => [c.actionSequence, c.status])),
          history,
          JSON.stringify(done.anomalies.map((a) => a.code)),
        );
      const step2 = done.actions.find((a) => a.sequence === 2)!;
      if (step2.status === 'Completed') expect(mine, 'step 2 completed: it is undone, then step 1').toEqual([2, 1]);
      else expect(mine, 'step 2 did not complete: only step 1 is undone').toEqual([1]);
    });

  it('complete_step of the Running step 2 after a cancel was requested: the run compensates step 2 then step 1, each once', async () => {
    const key = randomUUID();
    scripts.set(key, { steps: ['ok', 'gate', 'ok'] });
    const { runId } = await t.engine.startFlow(saga, { key });
    const gate = await waitFor('the worker at step 2 gate', async () => gates.get(`${key}:2`));
    gates.delete(`${key}:2`);
    const base = { ...who, target: { runId } };
    await t.engine.repairs.apply({
      kind: 'run.cancel',
      ...base,
      expected: { runStatus: 'Running' },
      idempotencyKey: randomUUID(),
    });
    const r = await t.engine.repairs.apply({
      kind: 'run.complete_step',
      ...who,
      target: { runId, stepSequence: 2 },
      expected: { runStatus: 'Running', stepStatus: 'Running', stepAttempts: 1 },
      output: { step: 2, by: 'operator' },
      idempotencyKey: randomUUID(),
    });
    expect(r.status).toBe('applied');
    const done = await t.drive(runId);
    gate(true);
    const mine = undone.filter((u) => u.startsWith(`${key}:`)).map((u) => Number(u.split(':')[1]));
    if (process.env.R40_LOG)
      console.info(
        done.run.status,
        JSON.stringify(done.actions.map((a) => [a.sequence, a.kind, a.status])),
        mine,
        done.events.map((e) => e.type).join(', '),
      );
    expect(done.run.status).toBe('Cancelled');
    expect(done.actions.find((a) => a.sequence === 2)).toMatchObject({
      status: 'Completed',
      output: { by: 'operator' },
    });
    expect(mine, 'the operator-completed step 2 is undone, then step 1').toEqual([2, 1]);
  });
});
