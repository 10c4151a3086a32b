import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { migrationsDir } from '@sagaflow/engine';
import { createDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import './provided-context.ts';
import { startService, type Service } from '../src/start-service.ts';

const quiet = pino({ level: 'silent' });

/** A database created WITHOUT the migrated template: only the service's own migrate() can build it. */
const emptyDatabase = (prefix: string) => createDatabase(inject('pgAdminUrl'), uniqueDatabaseName(prefix));

async function call(service: Service, method: string, path: string, body?: string) {
  const res = await fetch(`${service.url}${path}`, {
    method,
    ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
}

async function pollSignup(service: Service, runId: string, until: (s: Record<string, unknown>) => boolean) {
  let last: Record<string, unknown> = {};
  for (let i = 0; i < 300; i++) {
    const { status, json } = await call(service, 'GET', `/signups/${runId}`);
    expect(status).toBe(200);
    last = json;
    if (until(json)) return json;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`signup ${runId} never got there; last seen ${JSON.stringify(last)}`);
}

describe('the engine embedded in a plain Node HTTP service', () => {
  let service: Service;
  beforeAll(async () => {
    service = await startService({ databaseUrl: await emptyDatabase('example'), port: 0, logger: quiet });
  });
  afterAll(async () => {
    await service.stop();
  });

  it("the service's own migrate() call builds the engine's schema in an empty database", async () => {
    const shipped = readdirSync(migrationsDir).filter((n) => statSync(join(migrationsDir, n)).isDirectory());
    expect(shipped.length).toBeGreaterThan(0);
    expect(service.migrations).toEqual({ applied: shipped.sort(), alreadyApplied: 0 });
    const tables = await service.db.driver.query<{ n: number }>(
      "select count(*)::int as n from information_schema.tables where table_schema = 'sagaflow' and table_name in ('flow_runs', 'action_runs', 'jobs', 'signals')",
    );
    expect(tables[0]?.n).toBe(4);
  });

  it('a signup started over HTTP waits for verification, and once verified completes', async () => {
    const started = await call(
      service,
      'POST',
      '/signups',
      JSON.stringify({ email: ' Ada@Example.com ', name: 'Ada' }),
    );
    expect(started.status).toBe(202);
    const runId = started.json.runId as string;
    expect(started.headers.get('location')).toBe(`/signups/${runId}`);

    const waiting = await pollSignup(service, runId, (s) => s.status === 'Waiting');
    expect(waiting.waitingFor).toMatch(/^signal "verified" until /);
    expect(service.accounts.sentEmails).toEqual([]);

    const verified = await call(service, 'POST', `/signups/${runId}/verify`);
    expect(verified.status).toBe(202);

    const done = await pollSignup(service, runId, (s) => s.status === 'Completed');
    const result = done.result as { status: string; accountId: string; welcomeEmailId: string };
    expect(result.status).toBe('active');
    expect(service.accounts.findAccount(result.accountId)).toMatchObject({ email: 'ada@example.com', name: 'Ada' });
    expect(service.accounts.sentEmails).toEqual([
      { id: result.welcomeEmailId, to: 'ada@example.com', subject: 'Welcome aboard' },
    ]);
    expect(done.steps).toEqual([
      { name: 'signup.create-account', kind: 'action', status: 'Completed', attempts: 1 },
      { name: 'verified', kind: 'signal', status: 'Completed', attempts: expect.any(Number) as number },
      { name: 'signup.send-welcome-email', kind: 'action', status: 'Completed', attempts: 1 },
    ]);

    // The saga is over: a second verify is refused, and the email is taken (its business key).
    expect((await call(service, 'POST', `/signups/${runId}/verify`)).status).toBe(409);
    const again = await call(service, 'POST', '/signups', JSON.stringify({ email: 'ada@example.com', name: 'Ada' }));
    expect(again.status).toBe(409);
  });

  it('a bad body gets a 400 whose message names the field, and starts no run', async () => {
    const before = (await service.engine.listRuns({ limit: 1000 })).length;
    const cases: [string, string | null, RegExp][] = [
      ['{"email": "ada@', null, /not valid JSON/],
      ['', null, /empty/],
      ['[1, 2]', null, /JSON object/],
      [JSON.stringify({ name: 'No Email' }), 'email', /^email: /],
      [JSON.stringify({ email: 'not-an-email', name: 'X' }), 'email', /^email: must be an email address$/],
      [JSON.stringify({ email: 'x@example.com', name: 42 }), 'name', /^name: /],
      [JSON.stringify({ email: 'x@example.com', name: '   ' }), 'name', /^name: must not be empty$/],
    ];
    for (const [body, field, message] of cases) {
      const res = await call(service, 'POST', '/signups', body);
      expect(res.status, body).toBe(400);
      const error = res.json.error as { code: string; field: string | null; message: string };
      expect(error.field, body).toBe(field);
      expect(error.message, body).toMatch(message);
    }
    expect((await service.engine.listRuns({ limit: 1000 })).length).toBe(before);
  });

  it('an unknown signup is a 404 naming it; a wrong method is a 405', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const missing = await call(service, 'GET', `/signups/${id}`);
    expect(missing.status).toBe(404);
    expect((missing.json.error as { message: string }).message).toContain(id);
    expect((await call(service, 'POST', `/signups/${id}/verify`)).status).toBe(404);
    expect((await call(service, 'GET', '/signups/not-a-uuid')).status).toBe(404);
    const wrong = await call(service, 'DELETE', `/signups/${id}`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
  });

  it('a start that gets no database connection in time is a 503 with Retry-After, and starts no run', async () => {
    const pool = service.db.pool;
    if (!pool) throw new Error('the service runs on PostgreSQL: it has a pool');
    const count = async () =>
      (await service.db.driver.query<{ n: number }>('select count(*)::int as n from "sagaflow"."flow_runs"'))[0]?.n;
    const before = await count();
    const held = await Promise.all(Array.from({ length: pool.options.max }, () => pool.connect()));
    let busy: Awaited<ReturnType<typeof call>>;
    try {
      busy = await call(service, 'POST', '/signups', JSON.stringify({ email: 'busy@example.com', name: 'Busy' }));
    } finally {
      for (const c of held) c.release();
    }
    expect(busy.status, JSON.stringify(busy.json)).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(busy.json.error).toMatchObject({ code: 'database_busy' });
    expect(await count()).toBe(before);
  });
});

describe('a signup nobody verifies', () => {
  let service: Service;
  beforeAll(async () => {
    const url = await createDatabase(inject('pgAdminUrl'), uniqueDatabaseName('example_exp'), {
      template: inject('pgTemplate'),
    });
    service = await startService({ databaseUrl: url, port: 0, logger: quiet, verifyWithinSeconds: 1 });
  });
  afterAll(async () => {
    await service.stop();
  });

  it('is undone when the wait expires: the account is deleted and the run completes as expired', async () => {
    const started = await call(service, 'POST', '/signups', JSON.stringify({ email: 'late@example.com', name: 'L' }));
    expect(started.status).toBe(202);
    const done = await pollSignup(service, started.json.runId as string, (s) => s.status === 'Completed');
    expect(done.result).toEqual({ status: 'expired' });
    expect(done.compensations).toEqual([{ name: 'signup.delete-account', status: 'Completed' }]);
    expect(service.accounts.sentEmails).toEqual([]);
    expect(service.migrations.applied).toEqual([]);
  });
});
