import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { createTestOperator, rawCall, signInCookie, testDatabaseUrl } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

const startInput = { flowName: 'demo.order', input: { orderId: 'csrf', amount: 1 } };

describe('a mutation from a foreign Origin and any call naming an unknown Host are refused, nothing started', () => {
  let plane: ControlPlane;
  let cookie: string;
  beforeAll(async () => {
    const url = await testDatabaseUrl('origin');
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_ALLOWED_ORIGINS: 'http://console.test:3000',
        SAGAFLOW_ALLOWED_HOSTS: 'control.internal',
      }),
    );
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
  });
  afterAll(async () => {
    await plane.stop();
  });
  const runs = () => plane.db.prisma.flowRun.count();

  it('runs.start with Origin http://attacker.example is a 403 and starts no run, even with a valid session', async () => {
    const before = await runs();
    const answer = await rawCall(plane.url, 'runs.start', {
      type: 'mutation',
      input: startInput,
      cookie,
      origin: 'http://attacker.example',
    });
    expect(answer.status).toBe(403);
    expect(JSON.stringify(answer.body)).toContain('requests from origin http://attacker.example are not accepted');
    expect(await runs()).toBe(before);
  });

  it('an allowed Origin, or none (no browser), may mutate', async () => {
    const before = await runs();
    const allowed = await rawCall(plane.url, 'runs.start', {
      type: 'mutation',
      input: startInput,
      cookie,
      origin: 'http://console.test:3000',
    });
    expect(allowed.status).toBe(200);
    expect((await rawCall(plane.url, 'runs.start', { type: 'mutation', input: startInput, cookie })).status).toBe(200);
    expect(await runs()).toBe(before + 2);
  });

  it('a foreign Origin cannot sign in either (no login CSRF)', async () => {
    const answer = await rawCall(plane.url, 'auth.signIn', {
      type: 'mutation',
      input: { name: 'admin', password: 'whatever-it-is' },
      origin: 'http://attacker.example',
    });
    expect(answer.status).toBe(403);
    expect(answer.headers['set-cookie']).toBeUndefined();
  });

  it('Host: attacker.example is a 403 for a query and a mutation; nothing starts', async () => {
    const before = await runs();
    const mutation = await rawCall(plane.url, 'runs.start', {
      type: 'mutation',
      input: startInput,
      cookie,
      host: 'attacker.example',
    });
    expect(mutation.status).toBe(403);
    expect(JSON.stringify(mutation.body)).toContain('SAGAFLOW_ALLOWED_HOSTS');
    expect((await rawCall(plane.url, 'runs.list', { cookie, host: 'attacker.example:4000' })).status).toBe(403);
    expect(await runs()).toBe(before);
  });

  it('the configured names and CONTROL_HOST are answered; the setting replaces the default names', async () => {
    for (const host of ['control.internal:4000', 'CONTROL.internal', '127.0.0.1:9'])
      expect((await rawCall(plane.url, 'runs.list', { cookie, host })).status, host).toBe(200);
    expect((await rawCall(plane.url, 'runs.list', { cookie, host: 'localhost' })).status).toBe(403);
  });
});
