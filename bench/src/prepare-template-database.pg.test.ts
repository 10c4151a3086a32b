import { randomUUID } from 'node:crypto';
import { uniqueDatabaseName } from '@sagaflow/test-postgres';
import { describe, expect, inject, it } from 'vitest';
import { parseStepEventsArm, prepareTemplateDatabase, stepEventsArms } from './prepare-template-database.ts';
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

/** The events an insert of one run event and one step event leaves in the template `name`. */
async function eventsKept(adminUrl: string, name: string) {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return withPgClient(url.toString(), async (c) => {
    const run = randomUUID();
    await c.query(
      `insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, status, input, updated_at)
       values ($1, 'f', 1, 'Running', '{}', now())`,
      [run],
    );
    await c.query(
      `insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data)
       values ($1, 'run.started', null, null, '{}'), ($1, 'action.started', 0, $2, '{}')`,
      [run, randomUUID()],
    );
    const kept = await c.query<{ type: string }>(
      `select type from "sagaflow"."flow_events" where run_id = $1 order by id`,
      [run],
    );
    return kept.rows.map((r) => r.type);
  });
}

describe('prepareTemplateDatabase stepEvents', () => {
  it('drops only the events naming a step row in the `dropped` arm and keeps all in the others (ADR 0072)', async () => {
    const adminUrl = inject('pgAdminUrl');
    const names = { written: '', dropped: '', passed: '' };
    for (const arm of stepEventsArms) {
      names[arm] = uniqueDatabaseName(`ev_${arm}`);
      await prepareTemplateDatabase(adminUrl, names[arm], { stepEvents: arm });
    }
    expect(await eventsKept(adminUrl, names.written)).toEqual(['run.started', 'action.started']);
    expect(await eventsKept(adminUrl, names.passed)).toEqual(['run.started', 'action.started']);
    expect(await eventsKept(adminUrl, names.dropped)).toEqual(['run.started']);
  });

  it('names the flag and its values when the arm is unknown', () => {
    expect(parseStepEventsArm(undefined)).toBe('written');
    expect(() => parseStepEventsArm('none')).toThrow(
      '--step-events must be one of written, dropped, passed, not "none"',
    );
  });
});
