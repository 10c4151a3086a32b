import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, rawCall, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

const cursor = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

/**
 * Invariant 6: the time filters and cursors accept any ISO date-time zod accepts; year 0000 and
 * offsets that move a time across a year boundary are valid ISO but not all of them are times the
 * database can compare against. Each must be answered (a 200, or a 400 naming the field), never a 500.
 */
describe('extreme ISO times in filters and cursors are answered, never a 500', () => {
  let plane: ControlPlane;
  let cookie = '';
  beforeAll(async () => {
    const url = await testDatabaseUrl('r31_times');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
  });
  afterAll(async () => {
    await plane.stop();
  });

  const times = [
    '0000-01-01T00:00:00Z',
    '0000-01-01T00:00:00+01:00',
    '0001-01-01T00:00:00+23:59',
    '9999-12-31T23:59:59.999Z',
    '9999-12-31T23:59:59-23:59',
  ];
  const id = randomUUID();

  it.each(times)('%s', async (t) => {
    const calls: [string, unknown][] = [
      ['audit.page', { from: t }],
      ['audit.page', { to: t }],
      ['audit.page', { cursor: cursor({ t, k: `auth:${id}` }) }],
      ['anomalies.page', { from: t }],
      ['anomalies.page', { cursor: cursor({ t, k: '1' }) }],
      ['runs.page', { createdFrom: t }],
      ['runs.page', { cursor: cursor({ o: 'newest', t, id }) }],
      ['runs.page', { cursor: cursor({ o: 'stalest', t, id }) }],
      ['instances.page', { cursor: cursor({ o: 'stalest', t, id }) }],
      ['approvals.list', { cursor: cursor({ o: 'newest', t, id }) }],
      ['series.get', { until: t }],
    ];
    const answers: [string, string, number, string][] = [];
    for (const [path, input] of calls) {
      const a = await rawCall(plane.url, path, { cookie, input });
      answers.push([path, JSON.stringify(input).slice(0, 60), a.status, JSON.stringify(a.body).slice(0, 160)]);
    }
    // 404 would mean a procedure name here is wrong: then the list must be fixed, not the code.
    expect(answers.filter(([, , s]) => s === 404)).toEqual([]);
    expect(answers.filter(([, , s]) => s >= 500)).toEqual([]);
  });

  it('an anomalies cursor whose id is past the largest bigint is answered, never a 500', async () => {
    const a = await rawCall(plane.url, 'anomalies.page', {
      cookie,
      input: { cursor: cursor({ t: '2026-01-01T00:00:00Z', k: '9999999999999999999' }) },
    });
    expect(a.status).toBeLessThan(500);
  });
});
