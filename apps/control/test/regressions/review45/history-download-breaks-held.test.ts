import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { controlProcess, logLinesAtLeast } from '../../support/control-process.ts';
import { historyPlane, openPaused, parsedOrNull, readRest } from '../../support/history-downloads.ts';
import type { ControlPlane } from '../../../src/start-control-plane.ts';

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
    const h = await historyPlane('r45_breaks');
    ({ plane, databaseUrl, cookie } = h);
    const q = h.query;
    runId = await h.completedRun('r45.breaks');
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
        const res = await openPaused(url, cookie);
        expect(res.statusCode).toBe(200);
        await new Promise<void>((r) => res.once('data', () => r()).resume());
        res.destroy();
      }
      // The server is still serving, whole.
      const whole = await readRest(await openPaused(url, cookie));
      expect(whole.broken).toBe(false);
      expect((JSON.parse(whole.body) as { events: unknown[] }).events).toHaveLength(3000);
      expect(errors()).toEqual([]);
      // The reads of the downloads left mid-body end soon after their clients go (a page in progress
      // finishes first): none is left busy or inside a transaction.
      const busy = async () =>
        (
          await plane.db.driver.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'
            and (state like 'idle in transaction%' or state = 'active') and query ilike '%flow_events%'`,
          )
        )[0]?.n;
      // Only the downloads' reads (their last statement read flow_events): the control plane's own sweeps
      // may be inside a transaction of theirs at any moment (CI once saw one such, under load).
      for (let i = 0; i < 600 && (await busy()) !== 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await busy()).toBe(0);

      // The timers section's read waits on a lock; its backend is terminated: an error after the first byte.
      let lockedRes: IncomingMessage | null = null;
      await plane.db.driver.transaction(async (tx) => {
        await tx.exec('lock table "sagaflow"."timers" in access exclusive mode');
        lockedRes = await openPaused(url, cookie);
        const reading = readRest(lockedRes);
        let waiting: { pid: number }[] = [];
        while (waiting.length === 0) {
          waiting = await plane.db.driver.query<{ pid: number }>(
            `select a.pid from pg_stat_activity a join pg_locks l on l.pid = a.pid and not l.granted
              where a.datname = current_database() and a.query ilike '%timers%'`,
          );
        }
        await plane.db.driver.query('select pg_terminate_backend($1)', [waiting[0]!.pid]);
        const broken = await reading;
        expect(broken.broken).toBe(true);
        expect(parsedOrNull(broken.body)).toBeNull();
        expect(broken.body).toContain('"events": [');
      });
      expect(lockedRes).not.toBeNull();
      // The log line is written as the transfer breaks; it reaches this process's pipe a little later.
      const failed = () => errors().filter((l) => l.includes('history download failed'));
      for (let i = 0; i < 200 && failed().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(failed()).toHaveLength(1);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
