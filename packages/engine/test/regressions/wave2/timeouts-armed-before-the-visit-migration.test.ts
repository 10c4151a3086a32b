import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

const migrationsDir = fileURLToPath(new URL('../../../../../prisma/migrations', import.meta.url));
const visitMigration = '0007_timeouts_belong_to_a_state_visit';

/**
 * Issue 13, item 4, on a database that already holds armed timeouts: migration 0007 gives each
 * Pending timeout a visit. One that expects the state its instance is in belongs to the visit the
 * instance is in; one that expects another state was armed in a visit the instance has left, and must
 * stay a no-op if the instance comes back to that state.
 */
describe(`timeouts armed before the visit migration (${testDbKind()})`, () => {
  let db: Database;
  let before: string;
  beforeAll(async () => {
    db = await openTestDatabase({ migrated: false });
    before = mkdtempSync(join(tmpdir(), 'sagaflow-migrations-'));
    for (const name of readdirSync(migrationsDir).filter((n) => /^\d{4}_/.test(n) && n < visitMigration))
      cpSync(join(migrationsDir, name), join(before, name), { recursive: true });
  });
  afterAll(async () => {
    await db.close();
    rmSync(before, { recursive: true, force: true });
  });

  it('a timeout expecting the current state belongs to the current visit; any other to none', async () => {
    await migrate(db, { dir: before });
    const [instance] = await db.prisma.$queryRaw<{ id: string }[]>`
      insert into "sagaflow"."saga_instances" (process_name, correlation_key, current_state, state)
      values ('alarm', 'k-1', 'Waiting', '{}'::jsonb) returning id::text as id`;
    for (const expected of ['Waiting', 'Cancelled'])
      await db.prisma.$executeRaw`
        insert into "sagaflow"."process_timeouts" (instance_id, name, expected_state, due_at)
        values (${instance!.id}::uuid, 'Ring', ${expected}, now())`;

    expect((await migrate(db, { dir: migrationsDir })).applied).toContain(visitMigration);
    const rows = await db.prisma.$queryRaw<{ expected_state: string; armed_visit: number; state_visit: number }[]>`
      select t.expected_state, t.armed_visit, i.state_visit
        from "sagaflow"."process_timeouts" t join "sagaflow"."saga_instances" i on i.id = t.instance_id
       order by t.expected_state`;
    expect(rows).toEqual([
      { expected_state: 'Cancelled', armed_visit: -1, state_visit: 0 },
      { expected_state: 'Waiting', armed_visit: 0, state_visit: 0 },
    ]);
  });
});
