import { request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { controlProcess, logLinesAtLeast } from '../../support/control-process.ts';
import { createTestOperator, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

function open(url: string, cookie: string) {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(url, { headers: { cookie } }, resolve);
    req.on('error', reject);
    req.end();
  });
}

/** Reads a response to its end or its break: the body, and whether the transfer completed. */
function readAll(res: IncomingMessage) {
  return new Promise<{ body: string; complete: boolean }>((resolve) => {
    const chunks: Buffer[] = [];
    res.on('data', (b: Buffer) => chunks.push(b));
    res.on('error', () => undefined);
    res.on('close', () => resolve({ body: Buffer.concat(chunks).toString('utf8'), complete: res.complete }));
  });
}

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/**
 * Review 45, ADR 0115 §2 (held): clients that disconnect mid-body leave no error in the log and no
 * session busy for them; a page read that fails after the first byte (its backend terminated while
 * it waited on a lock) breaks the transfer, logged once, and the body is not a JSON document.
 */
describe('review 45 (held): a download that breaks', () => {
  let plane: ControlPlane;
  let databaseUrl = '';
  let cookie = '';
  let runId = '';
  beforeAll(async () => {
    databaseUrl = await testDatabaseUrl('r45_breaks');
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: databaseUrl,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_MONITOR_INTERVAL_MS: '3600000',
      }),
    );
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    const q = plane.db.driver.query.bind(plane.db.driver);
    runId = (
      await q<{ id: string }>(
        `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, started_at, finished_at)
         values ('r45.breaks', 1, 'Completed', '{}'::jsonb, now(), now()) returning id::text as id`,
      )
    )[0]!.id;
    await q(
      `insert into "sagaflow"."flow_events" (run_id, type, sequence, data)
       select $1::uuid, 'step.completed', g, jsonb_build_object('blob', repeat(md5(g::text), 100)) from generate_series(1, 3000) g`,
      [runId],
    );
    await q(
      `insert into "sagaflow"."timers" (run_id, sequence, fire_at, status) select $1::uuid, g, now(), 'Fired' from generate_series(1, 3) g`,
      [runId],
    );
  }, 120_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('mid-body disconnects log no error and leave no session busy; a failed page read breaks the transfer', async () => {
    const server = controlProcess({
      DATABASE_URL: databaseUrl,
      CONTROL_PORT: '0',
      SAGAFLOW_MONITOR_INTERVAL_MS: '3600000',
    });
    const errors = () => logLinesAtLeast(server.output(), 50);
    try {
      const url = `${await server.listening}/history/runs/${runId}`;
      for (let i = 0; i < 8; i++) {
        const res = await open(url, cookie);
        expect(res.statusCode).toBe(200);
        await new Promise<void>((r) => res.once('data', () => r()));
        res.destroy();
      }
      // The server is still serving, whole.
      const whole = await readAll(await open(url, cookie));
      expect(whole.complete).toBe(true);
      expect((JSON.parse(whole.body) as { events: unknown[] }).events).toHaveLength(3000);
      expect(errors()).toEqual([]);
      const busy = await plane.db.driver.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'
            and (state like 'idle in transaction%' or (state = 'active' and query ilike '%flow_events%'))`,
      );
      expect(busy[0]?.n).toBe(0);

      // The timers section's read waits on a lock; its backend is terminated: an error after the first byte.
      let lockedRes: IncomingMessage | null = null;
      await plane.db.driver.transaction(async (tx) => {
        await tx.exec('lock table "sagaflow"."timers" in access exclusive mode');
        lockedRes = await open(url, cookie);
        const reading = readAll(lockedRes);
        let waiting: { pid: number }[] = [];
        while (waiting.length === 0) {
          waiting = await plane.db.driver.query<{ pid: number }>(
            `select a.pid from pg_stat_activity a join pg_locks l on l.pid = a.pid and not l.granted
              where a.datname = current_database() and a.query ilike '%timers%'`,
          );
        }
        await plane.db.driver.query('select pg_terminate_backend($1)', [waiting[0]!.pid]);
        const broken = await reading;
        expect(broken.complete).toBe(false);
        expect(isJson(broken.body)).toBe(false);
        expect(broken.body).toContain('"events": [');
      });
      expect(lockedRes).not.toBeNull();
      expect(errors().filter((l) => l.includes('history download failed'))).toHaveLength(1);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
