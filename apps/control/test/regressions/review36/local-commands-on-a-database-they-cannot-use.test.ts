import { createDatabase as createPgDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { createDatabase } from '@sagaflow/engine';
import { describe, expect, inject, it } from 'vitest';
import '../../provided-context.ts';
import { testDatabaseUrl } from '../../support/test-plane.ts';
import { runCli } from '../../support/run-cli.ts';

/**
 * README "Operator CLI": `monitor sweep`, `doctor sweep` and `prune` "open the database themselves with the
 * control plane's settings"; openDatabase (control-engine.ts:6) "a failure names the setting to fix"; CliError
 * (cli-error.ts:3) "one message (saying what to do next)". The control plane migrates its database when it
 * starts (start-control-plane.ts:52); the local commands do not. Exit 2 is "a sweep that did not run", with the
 * reason the engine gives ("another replica holds the monitor lease until <time>", start-monitor.ts:40).
 */
describe('the local commands against a database they cannot use', () => {
  it('held: a server that is down is exit 1 naming DATABASE_URL, its password masked, one JSON document with --json', async () => {
    const r = await runCli(['monitor', 'sweep', '--json'], {
      DATABASE_URL: 'postgresql://ops:s3cr3t-db@127.0.0.1:1/x',
    });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/DATABASE_URL: cannot reach the PostgreSQL server/);
    expect(r.out + r.err).not.toContain('s3cr3t-db');
    expect(JSON.parse(r.out)).toMatchObject({ error: { exitCode: 1 } });
  });

  it.each([
    ['monitor sweep', ['monitor', 'sweep']],
    ['prune --dry-run', ['prune', '--dry-run']],
  ])(
    '%s on a database never migrated says it is not migrated and what to do, not a raw Prisma P2010',
    async (_l, args) => {
      const url = await createPgDatabase(inject('pgAdminUrl'), uniqueDatabaseName('r36_unmigrated'));
      const r = await runCli(args, { DATABASE_URL: url });
      expect(r.code).toBe(1);
      expect(r.err).not.toMatch(/P2010|Invalid `prisma/);
      expect(r.err).toMatch(/migrat/i);
    },
  );

  it('a sweep that did not run because another replica holds the lease says until when, not "until ?"', async () => {
    const url = await testDatabaseUrl('r36_lease_held');
    const db = await createDatabase({ kind: 'postgres', url });
    try {
      await db.prisma.$executeRawUnsafe(
        `insert into sagaflow.leases (name, holder, expires_at, renewed_at)
         values ('monitor', 'another-replica', now() + interval '1 hour', now())`,
      );
    } finally {
      await db.close();
    }
    const r = await runCli(['monitor', 'sweep'], { DATABASE_URL: url });
    expect(r.code).toBe(2);
    const reason = (JSON.parse(r.out) as { reason: string }).reason;
    expect(reason).toMatch(/another replica holds the monitor lease until \d{4}-\d\d-\d\dT/);
  });
});
