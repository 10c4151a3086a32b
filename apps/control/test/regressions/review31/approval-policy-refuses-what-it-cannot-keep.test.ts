import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, rawCall, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

/**
 * approvalPolicy.set takes a loose object and leaves the checking to the engine. Each input below is
 * either refused with a 400 naming a field, changing nothing (no policy change, no audit row), or
 * stored exactly as sent (values are never converted).
 */
describe('approvalPolicy.set: bad policies are a 400 naming the field and change nothing', () => {
  let plane: ControlPlane;
  let cookie = '';
  beforeAll(async () => {
    const url = await testDatabaseUrl('r31_policy');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
  });
  afterAll(async () => {
    await plane.stop();
  });

  const set = (input: unknown) => rawCall(plane.url, 'approvalPolicy.set', { type: 'mutation', cookie, input });
  const get = async () =>
    ((await rawCall(plane.url, 'approvalPolicy.get', { cookie })).body as { result: { data: unknown } }).result.data;
  const policyRows = () => plane.db.prisma.auditEvent.count({ where: { action: 'approval_policy_changed' } });

  it.each([
    ['a negative threshold', { gatedCommands: [], bulkThreshold: -1 }],
    ['a fractional threshold', { gatedCommands: [], bulkThreshold: 1.5 }],
    ['a threshold past any integer column', { gatedCommands: [], bulkThreshold: 1e300 }],
    ['a threshold past int4', { gatedCommands: [], bulkThreshold: 2 ** 31 }],
    ['an unknown command', { gatedCommands: ['run.obliterate'], bulkThreshold: null }],
    ['a NUL in a command', { gatedCommands: ['run.terminate\u0000'], bulkThreshold: null }],
    ['a lone surrogate in a command', { gatedCommands: ['\uD800'], bulkThreshold: null }],
    ['an unknown field', { gatedCommands: [], bulkThreshold: null, gateEverything: true }],
  ])('%s', async (_label, input) => {
    const before = { policy: await get(), rows: await policyRows() };
    const answer = await set(input);
    const after = { policy: await get(), rows: await policyRows() };
    const body = answer.body as { error?: { data?: { field?: string | null } } };
    if (answer.status === 200) {
      // Accepted: then it is kept exactly as sent.
      expect(after.policy).toMatchObject({
        gatedCommands: input.gatedCommands,
        bulkThreshold: input.bulkThreshold,
      });
      expect(after.rows).toBe(before.rows + 1);
    } else {
      expect({ status: answer.status, field: body.error?.data?.field }).toEqual({
        status: 400,
        field: expect.stringMatching(/^input\./) as string,
      });
      expect(after).toEqual(before);
    }
  });
});
