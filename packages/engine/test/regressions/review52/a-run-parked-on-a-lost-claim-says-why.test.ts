import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';

// Review 52. The README: "A parked run says why in `waitingFor` ... a run that cannot move without help
// says why in `stuckReason`." A run whose step is Running under another worker does say it ("step 1 (x) is
// running on another worker (...)") when a second replay meets the row. The test kit's documented
// `faults.loseClaim(action)` ("another worker takes the row over; this one's outcome is rejected") drives
// the other path to that same state: the worker that lost its claim parks the run, and says nothing.

const charge = defineAction({ name: 'r52.charge', run: async (i: { key: string }) => ({ ok: i.key }) });
const pay = defineFlow({
  name: 'r52.pay',
  version: 1,
  run: async (ctx, key: string) => ctx.action(charge, { key }),
});

describe(`a run parked after its worker lost the claim (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [pay], actions: [charge] });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a run parked on a step another worker holds says why in waitingFor or stuckReason', async () => {
    t.faults.loseClaim('r52.charge');
    const { runId } = await t.engine.startFlow(pay, 'k-1');
    const d = await t.drive(runId, { skipTime: false, until: (x) => x.run.status === 'Waiting' });
    // The state this is about: the step is Running under the rival, this worker's outcome was rejected.
    expect(d.actions[0]).toMatchObject({ status: 'Running', attempts: 2 });
    expect({ waitingFor: d.run.waitingFor, stuckReason: d.run.stuckReason }).not.toEqual({
      waitingFor: null,
      stuckReason: null,
    });
  });
});
