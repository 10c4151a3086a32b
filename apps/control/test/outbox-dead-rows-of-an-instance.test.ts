import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { apiClient, createTestOperator, signInCookie } from './support/test-plane.ts';
import type { ControlPlane } from '../src/start-control-plane.ts';
import { deadOrder, startDeadOutboxPlane, type Inventory } from './support/dead-outbox-plane.ts';
import { runCli as cli } from './support/run-cli.ts';

/**
 * ADR 0122 (review 48): an instance's Dead outbox row is never hidden behind its later rows. The
 * instance's outbox list (`instances.get`, `sagaflow instance show`, the console's instance page) lists its
 * newest 100 rows and then its older Dead ones, and says older rows exist; `sagaflow requeue --instance`
 * reads the instance's Dead rows by their own query, at most 500 a bulk, and says when there are more.
 */
describe('the Dead outbox rows of an instance behind many later rows (PostgreSQL)', () => {
  let plane: ControlPlane;
  let inventory: Inventory;
  let env: Record<string, string>;
  let viewer = '';
  beforeAll(async () => {
    ({ plane, inventory } = await startDeadOutboxPlane('dead_rows_of_an_instance'));
    viewer = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    const operator = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    const { token } = await apiClient(plane.url, operator).tokens.create.mutate({ name: 'dead-rows' });
    env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
  });
  afterAll(async () => {
    await plane?.stop();
    inventory?.server.close();
  });

  it('instances.get and instance show list the Dead row written before 150 Published ones', async () => {
    const { instanceId, row } = await deadOrder(plane, inventory, viewer);
    await plane.db.prisma.$executeRaw`
      insert into "sagaflow"."outbox" (id, message_id, source_kind, source_id, type, destination, payload, status, published_at)
      select gen_random_uuid(), 'later-' || n, 'process', ${instanceId}, 'NotifyCustomer', 'demo.inventory', '{}'::jsonb,
             'Published', now()
        from generate_series(1, 150) n`;
    const got = await apiClient(plane.url, viewer).instances.get.query({ id: instanceId });
    expect(got.outbox.slice(0, 100).every((o) => o.status === 'Published')).toBe(true);
    expect(got.outbox.slice(100).map((o) => [o.id, o.status])).toEqual([[row.id, 'Dead']]);
    expect(got).toMatchObject({ outboxTruncated: true, deadOutboxNotListed: 0 });
    const shown = await cli(['instance', 'show', instanceId], env);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toMatch(new RegExp(`${row.id}\\s+ReserveInventory`));
  }, 120_000);

  it('requeue --instance with 501 Dead rows requeues the 500 longest dead, names the rest, and exits 2', async () => {
    const admin = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    await apiClient(plane.url, admin).approvalPolicy.set.mutate({ gatedCommands: [], bulkThreshold: null });
    const { instanceId, row } = await deadOrder(plane, inventory, viewer);
    await plane.db.prisma.$executeRaw`
      insert into "sagaflow"."outbox" (id, message_id, source_kind, source_id, type, destination, payload, status, attempts, available_at, last_error)
      select gen_random_uuid(), 'many-dead-' || n, 'process', ${instanceId}, 'NotifyCustomer', 'demo.inventory', '{}'::jsonb,
             'Dead', 3, now() + interval '1 hour' + n * interval '1 ms', 'webhook answered 503'
        from generate_series(1, 500) n`;
    const newest = await plane.db.prisma.outboxMessage.findFirstOrThrow({ where: { message_id: 'many-dead-500' } });
    // The dry run previews all 500 (an input too long for a URL goes in a POST's body) and changes nothing.
    const dry = await cli(['requeue', '--instance', instanceId, '--dry-run'], env);
    expect(dry.out.split('\n')[0], dry.out + dry.err).toMatch(/would requeue 500 Dead rows/);
    expect(dry.out).toContain(`instance ${instanceId} has more than 500 Dead rows`);
    expect(await plane.db.prisma.outboxMessage.count({ where: { source_id: instanceId, status: 'Dead' } })).toBe(501);
    const applied = await cli(['requeue', '--instance', instanceId, '--reason', 'inventory is back'], env);
    expect(applied.code, applied.out + applied.err).toBe(2);
    expect(applied.out.split('\n')[0]).toBe('outbox.requeue requeued 500 Dead rows; 1 left out: applied to 500 of 500');
    expect(applied.out).toContain(`instance ${instanceId} has more than 500 Dead rows`);
    expect(applied.out).toContain(row.id);
    expect(applied.out).not.toContain(newest.id);
    // The one left is untouched (a requeue counts its attempts again from 0).
    expect(await plane.db.prisma.outboxMessage.findUniqueOrThrow({ where: { id: newest.id } })).toMatchObject({
      status: 'Dead',
      attempts: 3,
    });
  }, 120_000);
});
