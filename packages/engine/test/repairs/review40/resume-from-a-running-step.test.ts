import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { waitFor } from '../../support/wait-for.ts';
import { fuzzActions, gates, saga, scripts, who } from './support/fuzz-saga.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

/**
 * Review 40, shrunk from the randomized model: run.resume_from_step drafted against a step a live
 * worker is running (the state the operator read: Running, attempt 1). The repair forgets the row the
 * worker holds; the worker is still executing the action.
 */
describe('review 40: resume_from_step over a step a live worker holds', () => {
  let t!: T;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [saga], actions: fuzzActions });
    t.engine.startWorkers();
  });
  afterAll(async () => {
    for (const g of gates.values()) g(true);
    await t?.closeAll();
  });

  async function heldAtStepOne() {
    const key = randomUUID();
    scripts.set(key, { steps: ['gate', 'ok', 'ok'] });
    const { runId } = await t.engine.startFlow(saga, { key });
    const first = await waitFor('the worker at step 1 gate', async () => gates.get(`${key}:1`));
    gates.delete(`${key}:1`);
    const cmd = {
      kind: 'run.resume_from_step' as const,
      target: { runId, stepSequence: 1 },
      expected: { runStatus: 'Running' as const, stepStatus: 'Running' as const, stepAttempts: 1 },
      ...who,
      idempotencyKey: randomUUID(),
    };
    return { key, runId, first, cmd };
  }

  it('its preview says the Running step runs on in its worker and may act twice', async () => {
    const { runId, first, cmd } = await heldAtStepOne();
    const preview = await t.engine.repairs.preview(cmd);
    expect(preview.applicable).toBe(true);
    expect(preview.effects.notes).toContainEqual(
      expect.stringMatching(
        /^step 1 \([\w-]+\) is Running: a worker still running attempt 1 finishes it, but its outcome is refused .*may happen twice/,
      ),
    );
    first(true);
    expect((await t.drive(runId)).run.status).toBe('Completed');
  });

  it("a worker's outcome for a step forgotten under it is journaled (outcome_rejected / write_refused), never silently lost", async () => {
    const { key, runId, first, cmd } = await heldAtStepOne();
    const applied = await t.engine.repairs.apply(cmd);
    expect(applied.status).toBe('applied');
    // The run replays from the repaired record: step 1 runs again as a new row, at the gate again.
    const second = await waitFor('the second attempt at step 1 gate', async () => gates.get(`${key}:1`));
    gates.delete(`${key}:1`);
    // The first worker now reports: its result must not be recorded, and must not vanish unjournaled.
    first(true);
    const journaled = await waitFor(
      "the first worker's outcome to be journaled",
      async () => {
        const n = await t.db.prisma.anomalyLog.count({
          where: { run_id: runId, code: { in: ['outcome_rejected', 'write_refused'] } },
        });
        return n > 0 ? n : undefined;
      },
      5_000,
    ).catch(() => 0);
    second(true);
    const done = await t.drive(runId);
    expect(done.run.status).toBe('Completed');
    const step1 = done.actions.filter((a) => a.sequence === 1);
    expect(step1, 'one step 1 row, recorded once').toHaveLength(1);
    expect(journaled, "the forgotten attempt's late outcome is journaled once").toBe(1);
  });
});
