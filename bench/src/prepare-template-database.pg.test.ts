import { randomUUID } from 'node:crypto';
import { uniqueDatabaseName } from '@sagaflow/test-postgres';
import { describe, expect, inject, it } from 'vitest';
import { prepareTemplateDatabase } from './prepare-template-database.ts';
import { withPgClient } from './with-pg-client.ts';

/** The template's foreign keys to flow_runs, by table, and whether an event of a run that does not exist is refused. */
async function runKeys(adminUrl: string, name: string) {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return withPgClient(url.toString(), async (c) => {
    const keys = await c.query<{ table: string }>(
      `select t.relname as table from pg_constraint k join pg_class t on t.oid = k.conrelid
        where k.contype = 'f' and k.confrelid = '"sagaflow"."flow_runs"'::regclass order by 1`,
    );
    const orphan = await c
      .query(`insert into "sagaflow"."flow_events" (run_id, type) values ($1, 'run.started')`, [randomUUID()])
      .then(
        () => 'written',
        (e: unknown) => (e as { code?: string }).code,
      );
    return { tables: keys.rows.map((r) => r.table), orphan };
  });
}

describe('prepareTemplateDatabase', () => {
  it('keeps the foreign keys to flow_runs unless told to drop them for an A/B arm (ADR 0068)', async () => {
    const adminUrl = inject('pgAdminUrl');
    const kept = uniqueDatabaseName('fk_kept');
    const dropped = uniqueDatabaseName('fk_dropped');
    await prepareTemplateDatabase(adminUrl, kept);
    await prepareTemplateDatabase(adminUrl, dropped, { withoutRunForeignKeys: true });
    expect(await runKeys(adminUrl, kept)).toEqual({
      tables: ['action_runs', 'compensation_runs', 'flow_events', 'signals', 'timers'],
      orphan: '23503',
    });
    expect(await runKeys(adminUrl, dropped)).toEqual({ tables: [], orphan: 'written' });
  });
});
