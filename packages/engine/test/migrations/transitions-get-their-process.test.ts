import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';

const migrationsDir = fileURLToPath(new URL('../../../../prisma/migrations', import.meta.url));
const processMigration = '0022_transitions_carry_their_process';

/**
 * ADR 0040, on a database that already holds history: migration 0022 gives every existing
 * transition its instance's process (each of two processes its own, whatever the outcome), and from
 * then on a transition written without one (an engine of before the migration, in a rolling upgrade)
 * gets its instance's instead of failing.
 */
describe(`transitions written before the process migration (${testDbKind()})`, () => {
  let db: Database;
  let before: string;
  beforeAll(async () => {
    db = await openTestDatabase({ migrated: false });
    before = mkdtempSync(join(tmpdir(), 'sagaflow-migrations-'));
    for (const name of readdirSync(migrationsDir).filter((n) => /^\d{4}_/.test(n) && n < processMigration))
      cpSync(join(migrationsDir, name), join(before, name), { recursive: true });
  });
  afterAll(async () => {
    await db.close();
    rmSync(before, { recursive: true, force: true });
  });

  it('fills each transition with its instance’s process, and one written later without it gets it too', async () => {
    await migrate(db, { dir: before });
    await db.driver.exec(`
      insert into "sagaflow"."saga_instances" (process_name, correlation_key, current_state, state)
      select p, p || '-' || k, 'Open', '{}'::jsonb
        from unnest(array['billing', 'shipping']) p, generate_series(1, 3) k;
      insert into "sagaflow"."process_transitions" (instance_id, from_state, to_state, message_id, message_type, outcome)
      select i.id, 'Open', 'Open', i.correlation_key || '-' || o, 'Seen', o
        from "sagaflow"."saga_instances" i, unnest(array['applied', 'ignored', 'repair']) o;`);

    expect((await migrate(db, { dir: migrationsDir })).applied).toContain(processMigration);
    const rows = await db.driver.query<{ process_name: string | null; expected: string }>(`
      select t.process_name, i.process_name as expected
        from "sagaflow"."process_transitions" t join "sagaflow"."saga_instances" i on i.id = t.instance_id`);
    expect(rows).toHaveLength(18);
    for (const r of rows) expect(r.process_name).toBe(r.expected);
    expect(new Set(rows.map((r) => r.process_name))).toEqual(new Set(['billing', 'shipping']));

    const [late] = await db.driver.query<{ process_name: string; expected: string }>(`
      with i as (select id, process_name from "sagaflow"."saga_instances" where process_name = 'shipping' limit 1),
           t as (insert into "sagaflow"."process_transitions" (instance_id, from_state, to_state, message_id, message_type)
                 select id, 'Open', 'Open', 'late', 'Seen' from i returning instance_id, process_name)
      select t.process_name, i.process_name as expected from t join i on i.id = t.instance_id`);
    expect(late).toEqual({ process_name: 'shipping', expected: 'shipping' });
  });
});
