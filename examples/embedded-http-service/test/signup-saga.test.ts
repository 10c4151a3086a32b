import { createTestEngine, type TestEngine } from '@sagaflow/engine/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAccountDirectory } from '../src/account-directory.ts';
import { defineSignupSaga } from '../src/signup-saga.ts';

// How a host tests its own saga with the engine's test kit: an in-memory engine in one call, runs
// driven to the end, a clock that skips the wait instead of sleeping, and injected faults.
const accounts = createAccountDirectory();
const { signupFlow, actions } = defineSignupSaga(accounts);
let t: TestEngine;

beforeAll(async () => {
  t = await createTestEngine({ flows: [signupFlow], actions });
});
afterAll(async () => {
  await t.close();
});

const aDay = 86_400;

it('an unverified signup is undone when its day runs out: the test clock skips the day', async () => {
  const before = t.clock.now().getTime();
  const done = await t.runToCompletion(signupFlow, {
    email: 'lin@example.com',
    name: 'Lin',
    verifyWithinSeconds: aDay,
  });
  expect(done.run.status).toBe('Completed');
  expect(done.run.output).toEqual({ status: 'expired' });
  const [created] = done.actions.filter((a) => a.name === 'signup.create-account');
  expect(accounts.findAccount((created?.output as { accountId: string }).accountId)).toBeUndefined();
  expect(t.clock.now().getTime() - before).toBeGreaterThanOrEqual(aDay * 1000);
});

it('a wake delivered three more times (at-least-once queue) still creates one account and sends one email', async () => {
  const { runId } = await t.engine.startFlow(signupFlow, {
    email: 'ada@example.com',
    name: 'Ada',
    verifyWithinSeconds: aDay,
  });
  await t.faults.duplicateDelivery(runId, 3);
  await t.drive(runId, { until: (d) => d.run.waitingFor !== null, skipTime: false });
  await t.engine.signal(runId, 'verified');
  const done = await t.drive(runId);
  expect(done.run.output).toMatchObject({ status: 'active' });
  expect(done.actions.map((a) => [a.name, a.status, a.attempts])).toEqual([
    ['signup.create-account', 'Completed', 1],
    ['verified', 'Completed', 0],
    ['signup.send-welcome-email', 'Completed', 1],
  ]);
});
