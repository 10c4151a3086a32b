import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { apiClient, createTestOperator, signInCookie } from '../../support/test-plane.ts';
import type { ControlPlane } from '../../../src/start-control-plane.ts';
import { startDeadOutboxPlane, type Inventory } from '../../support/dead-outbox-plane.ts';
import { runCli as cli } from '../../support/run-cli.ts';

const ROWS = 300;

/**
 * Review 48, attack 4: two operators' `sagaflow requeue --dead` (real CLI child processes, at once) over the
 * same 300 Dead rows of 100 instances, while the control plane's outbox publisher (a real webhook) sends the
 * rows they requeue. ADR 0104: each row requeued once, one applied audit row, published once more.
 */
describe('review 48: two bulk requeues of every Dead row race each other and the relay (PostgreSQL)', () => {
  let plane: ControlPlane;
  let inventory: Inventory;
  let env: Record<string, string>;
  beforeAll(async () => {
    ({ plane, inventory } = await startDeadOutboxPlane('review48_bulk_race'));
    const operator = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    const { token } = await apiClient(plane.url, operator).tokens.create.mutate({ name: 'r48' });
    // No approval gate: both bulks apply at once (the gated form is outbox-bulk-requeue-cli.test.ts's).
    const admin = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    await apiClient(plane.url, admin).approvalPolicy.set.mutate({ gatedCommands: [], bulkThreshold: null });
    env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
  });
  afterAll(async () => {
    await plane?.stop();
    inventory?.server.close();
  });

  it('each Dead row is requeued once, audited once as applied, and delivered once more', async () => {
    await plane.db.prisma.$executeRaw`
      insert into "sagaflow"."outbox" (id, message_id, source_kind, source_id, type, destination, payload, status, attempts, available_at, last_error)
      select gen_random_uuid(), 'r48-dead-' || n, 'process', 'r48-inst-' || (n % 100), 'ReserveInventory', 'demo.inventory',
             '{}'::jsonb, 'Dead', 1, now() - interval '1 hour' + n * interval '1 ms', 'webhook answered 503'
        from generate_series(1, ${ROWS}::int) n`;
    inventory.up.now = true;
    const [a, b] = await Promise.all([
      cli(['requeue', '--dead', '--limit', '500', '--reason', 'outage over (a)'], env),
      cli(['requeue', '--dead', '--limit', '500', '--reason', 'outage over (b)'], env),
    ]);
    console.log(
      'review48 bulk race exits',
      a.code,
      b.code,
      a.out.split('\n')[0],
      '|',
      b.out.split('\n')[0],
      a.err,
      b.err,
    );
    const rows = await plane.db.prisma.outboxMessage.findMany({
      where: { message_id: { startsWith: 'r48-dead-' } },
      select: { id: true, message_id: true },
    });
    expect(rows).toHaveLength(ROWS);
    // Every row ends Published (the relay sent what was requeued).
    for (let i = 0; i < 400; i++) {
      const left = await plane.db.prisma.outboxMessage.count({
        where: { message_id: { startsWith: 'r48-dead-' }, status: { not: 'Published' } },
      });
      if (left === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const audits = await plane.db.prisma.repairCommand.findMany({
      where: { command: 'outbox.requeue', target_id: { in: rows.map((r) => r.id) } },
      select: { target_id: true, status: true },
    });
    const applied = new Map<string, number>();
    for (const x of audits) if (x.status === 'applied') applied.set(x.target_id, (applied.get(x.target_id) ?? 0) + 1);
    expect(rows.filter((r) => applied.get(r.id) !== 1).map((r) => [r.id, applied.get(r.id) ?? 0])).toEqual([]);
    const statuses = await plane.db.prisma.outboxMessage.groupBy({
      by: ['status'],
      where: { message_id: { startsWith: 'r48-dead-' } },
      _count: true,
    });
    expect(statuses.map((s) => [s.status, s._count])).toEqual([['Published', ROWS]]);
    const times = new Map<string, number>();
    for (const m of inventory.got) times.set(m, (times.get(m) ?? 0) + 1);
    expect(
      rows.filter((r) => times.get(r.message_id) !== 1).map((r) => [r.message_id, times.get(r.message_id)]),
    ).toEqual([]);
    // Each CLI ends as documented: 0 (all applied) or 2 (some conflicted); on a loaded machine a 300-row bulk
    // may outlast the CLI's 30 s request limit (exit 1, "run it again with the same --idempotency-key"),
    // which leaves the rows as checked above.
    for (const r of [a, b])
      expect(
        r.code === 0 || r.code === 2 || (r.code === 1 && r.err.includes('TimeoutError')),
        `${r.out}\n${r.err}`,
      ).toBe(true);
  }, 180_000);
});
