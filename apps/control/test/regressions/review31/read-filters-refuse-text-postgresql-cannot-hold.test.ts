import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, rawCall, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

/**
 * Invariant 6 (ADR 0013): text PostgreSQL cannot hold as given (NUL; a lone UTF-16 surrogate, which
 * the driver would turn into U+FFFD) is refused with a 400 naming the field, never a 500 and never
 * silently converted, in reads' filters as much as in writes.
 */
describe('read filters refuse NUL and lone surrogates with a 400 naming the field', () => {
  let plane: ControlPlane;
  let cookie = '';
  beforeAll(async () => {
    const url = await testDatabaseUrl('r31_read_filters');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
  });
  afterAll(async () => {
    await plane.stop();
  });

  const cases: [string, string, Record<string, unknown>][] = [];
  for (const [bad, label] of [
    ['key\u0000', 'NUL'],
    ['key\uD800', 'a lone surrogate'],
  ] as const) {
    cases.push(
      [label, 'runs.page', { businessKey: bad }],
      [label, 'runs.page', { search: bad }],
      [label, 'runs.page', { flowName: bad }],
      [label, 'runs.page', { stuckReason: bad }],
      [label, 'runs.list', { flowName: bad }],
      [label, 'instances.page', { search: bad }],
      [label, 'audit.page', { actor: bad }],
      [label, 'audit.page', { target: bad }],
      [label, 'anomalies.page', { code: bad }],
    );
  }

  it.each(cases)('%s in %s %j', async (_label, path, input) => {
    const a = await rawCall(plane.url, path, { cookie, input });
    const field = (a.body as { error?: { data?: { field?: string | null } } }).error?.data?.field;
    expect({ status: a.status, field }).toEqual({ status: 400, field: `input.${Object.keys(input)[0] ?? ''}` });
  });
});
