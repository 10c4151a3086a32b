import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { apiClient, createTestOperator, signInCookie } from '../../support/test-plane.ts';
import type { ControlPlane } from '../../../src/start-control-plane.ts';
import { startDeadOutboxPlane, type Inventory } from '../../support/dead-outbox-plane.ts';
import { runCli as cli } from '../../support/run-cli.ts';

/**
 * Review 48, attack 4 (what the race showed): a bulk `sagaflow requeue` one of whose rows stopped being Dead
 * between the CLI's read and its apply. The CLI's summary line must not say it requeued the rows it did not.
 * Driven by a row lock: the test holds one row, sees the apply wait on it (pg_stat_activity), marks the
 * row Published (another operator's requeue delivered it meanwhile) and lets the apply go on.
 */
describe('review 48: a bulk requeue that applied only some rows says so in its summary (PostgreSQL)', () => {
  let plane: ControlPlane;
  let inventory: Inventory;
  let env: Record<string, string>;
  beforeAll(async () => {
    ({ plane, inventory } = await startDeadOutboxPlane('review48_partial_bulk'));
    const operator = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    const { token } = await apiClient(plane.url, operator).tokens.create.mutate({ name: 'r48' });
    const admin = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    await apiClient(plane.url, admin).approvalPolicy.set.mutate({ gatedCommands: [], bulkThreshold: null });
    env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
  });
  afterAll(async () => {
    await plane?.stop();
    inventory?.server.close();
  });

  it('"requeued 2 of 3": the headline does not count the row it left untouched as requeued', async () => {
    await plane.db.prisma.$executeRaw`
      insert into "sagaflow"."outbox" (id, message_id, source_kind, source_id, type, destination, payload, status, attempts, available_at, last_error)
      select gen_random_uuid(), 'r48-part-' || n, 'process', 'r48-part-inst-' || n, 'ReserveInventory', 'demo.inventory',
             '{}'::jsonb, 'Dead', 1, now() - interval '1 hour' + n * interval '1 ms', 'webhook answered 503'
        from generate_series(1, 3) n`;
    const rows = await plane.db.prisma.outboxMessage.findMany({
      where: { message_id: { startsWith: 'r48-part-' } },
      orderBy: { seq: 'asc' },
    });
    const held = rows[1]!;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const holder = plane.db.prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`select id from "sagaflow"."outbox" where id = ${held.id}::uuid for update`;
        await gate;
        await tx.$executeRaw`update "sagaflow"."outbox" set status = 'Published', published_at = now() where id = ${held.id}::uuid`;
      },
      { timeout: 120_000, maxWait: 10_000 },
    );
    const answer = cli(['requeue', ...rows.map((r) => r.id), '--reason', 'partial'], env);
    // The apply is waiting on the held row's lock.
    for (let i = 0; ; i++) {
      const waiting = await plane.db.prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where wait_event_type = 'Lock' and query ilike '%outbox%' and pid <> pg_backend_pid()`;
      if (waiting[0]!.n > 0) break;
      if (i > 1200) throw new Error('the bulk never waited on the held row');
      await new Promise((r) => setTimeout(r, 50));
    }
    release();
    await holder;
    const { code, out } = await answer;
    console.log(out);
    expect(code).toBe(2);
    expect(out).toMatch(/applied to 2 of 3/);
    const headline = out.split('\n')[0]!;
    expect(headline).not.toMatch(/requeued 3 Dead rows/);
  }, 180_000);
});
