import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

describe('invariant 6: a mutation body in an unexpected content type is a 4xx, never a 500', () => {
  let plane: ControlPlane;
  let cookie = '';
  beforeAll(async () => {
    const url = await testDatabaseUrl('r31_content_types');
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent', SAGAFLOW_API_MAX_BODY_BYTES: '65536' }),
    );
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
  });
  afterAll(async () => {
    await plane.stop();
  });

  const post = async (path: string, contentType: string | null, body: string | Uint8Array) => {
    const headers: Record<string, string> = { cookie };
    if (contentType !== null) headers['content-type'] = contentType;
    const res = await fetch(`${plane.url}/trpc/${path}`, { method: 'POST', headers, body });
    return { status: res.status, text: await res.text() };
  };

  it('each odd body answers a 4xx with no internals', async () => {
    const big = 'x'.repeat(200_000);
    const cases: [string, string | null, string][] = [
      ['text/plain', 'text/plain', '{"name":"ci"}'],
      ['no content type', null, '{"name":"ci"}'],
      ['form-urlencoded', 'application/x-www-form-urlencoded', 'name=ci'],
      ['multipart, malformed', 'multipart/form-data; boundary=zzz', '--yyy\r\nnot a part\r\n'],
      ['multipart, no boundary', 'multipart/form-data', 'whatever'],
      [
        'multipart, well formed',
        'multipart/form-data; boundary=zzz',
        '--zzz\r\nContent-Disposition: form-data; name="name"\r\n\r\nci\r\n--zzz--\r\n',
      ],
      [
        'multipart, over the body limit',
        'multipart/form-data; boundary=zzz',
        `--zzz\r\nContent-Disposition: form-data; name="name"\r\n\r\n${big}\r\n--zzz--\r\n`,
      ],
      ['octet-stream', 'application/octet-stream', big],
      ['json with a charset', 'application/json; charset=latin1', '{"name":"ci"}'],
      ['json, not JSON', 'application/json', '{"name":'],
      ['json, a lone surrogate escape in a key', 'application/json', '{"\\ud800":"ci"}'],
    ];
    const answers: [string, number, string][] = [];
    for (const [label, type, body] of cases) {
      const a = await post('tokens.create', type, body);
      answers.push([label, a.status, a.text.slice(0, 160)]);
    }
    const bad = answers.filter(([label, s]) => s >= 500 || (s < 400 && label !== 'json with a charset'));
    expect(bad).toEqual([]);
    for (const [, , text] of answers) expect(text).not.toMatch(/node_modules|\.ts:\d+|\bat \w+ \(/);
    expect((await fetch(`${plane.url}/healthz`)).status).toBe(200);
  });
});
