import { createDatabase as createPgDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Database } from '@sagaflow/engine';
import '../../provided-context.ts';
import { cookieFrom, sideDatabase, startReplica, type Replica } from './replicas.ts';

const metricsToken = 'review46-metrics-token-0123456789';

/**
 * Review 46: two control-plane processes started at the same moment on an EMPTY database (no
 * schema, no operator). The migrations are applied once (ADR: migrate serialises on an advisory
 * lock), exactly one first admin is created and its generated password printed once, by one replica,
 * and that password signs in on both. Each replica then answers /readyz, and /metrics (behind its
 * token) with the same table-derived figures (ADR 0017: every replica reports the same values).
 */
describe('two replicas starting together on an empty database', () => {
  const started: Replica[] = [];
  const sides: Database[] = [];
  afterAll(async () => {
    await Promise.all(started.map((r) => r.stop()));
    await Promise.all(sides.map((d) => d.close()));
  });

  it('migrate once, one first admin whose printed password works on both, both ready and scraped alike', async () => {
    for (let round = 0; round < 3; round++) {
      const url = await createPgDatabase(inject('pgAdminUrl'), uniqueDatabaseName(`r46_empty_${round}`));
      const env = { SAGAFLOW_ADMIN_PASSWORD: '', SAGAFLOW_METRICS_TOKEN: metricsToken };
      const [a, b] = await Promise.all([startReplica(url, env), startReplica(url, env)]);
      started.push(a, b);
      const db = await sideDatabase(url);
      sides.push(db);

      const migrations = await db.prisma.$queryRawUnsafe<{ migration_name: string; n: number }[]>(
        `select migration_name, count(*)::int as n from sagaflow._prisma_migrations group by migration_name having count(*) > 1`,
      );
      expect(migrations, 'no migration recorded twice').toEqual([]);
      expect(await db.prisma.operator.count()).toBe(1);
      expect(await db.prisma.auditEvent.count({ where: { action: 'operator_created' } })).toBe(1);

      const printed = [a, b].flatMap((r) =>
        r.lines.flatMap((l) => {
          const m = /Sign in as "admin" with password: (\S+)/.exec(l);
          return m?.[1] ? [m[1]] : [];
        }),
      );
      expect(printed, 'one replica printed the first admin’s password, once').toHaveLength(1);
      for (const r of [a, b]) await cookieFrom(r.url, 'admin', printed[0]);

      for (const r of [a, b]) {
        const ready = await fetch(`${r.url}/readyz`);
        expect(ready.status).toBe(200);
      }
      const scrape = async (r: Replica) => {
        const res = await fetch(`${r.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
        expect(res.status).toBe(200);
        const text = await res.text();
        return text
          .split('\n')
          .filter((l) =>
            /^sagaflow_(stuck_runs|outbox_pending|outbox_dead|repairs_total|repairs_awaiting_approval)\b/.test(l),
          )
          .sort();
      };
      const [ma, mb] = [await scrape(a), await scrape(b)];
      expect(ma.length, 'the table-derived series are there').toBeGreaterThan(0);
      expect(ma).toEqual(mb);
    }
  }, 300_000);
});
