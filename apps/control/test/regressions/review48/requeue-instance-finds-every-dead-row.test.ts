import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { apiClient, createTestOperator, signInCookie } from '../../support/test-plane.ts';
import type { ControlPlane } from '../../../src/start-control-plane.ts';
import { deadOrder, startDeadOutboxPlane, type Inventory } from '../../support/dead-outbox-plane.ts';
import { runCli as cli } from '../../support/run-cli.ts';

/**
 * Review 48: `sagaflow requeue --instance <id>` is "every Dead row of the instances" (the CLI's usage, ADR
 * 0104's addendum). A long-lived instance whose command died and which then sent 150 more messages (all
 * delivered) still has that Dead row: the bulk must find it, however many rows came after it.
 */
describe('review 48: requeue --instance finds a Dead row behind many later rows (PostgreSQL)', () => {
  let plane: ControlPlane;
  let inventory: Inventory;
  let env: Record<string, string>;
  let viewer = '';
  beforeAll(async () => {
    ({ plane, inventory } = await startDeadOutboxPlane('review48_instance_dead'));
    viewer = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    const operator = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    const { token } = await apiClient(plane.url, operator).tokens.create.mutate({ name: 'r48' });
    env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
  });
  afterAll(async () => {
    await plane?.stop();
    inventory?.server.close();
  });

  it('a dry run of requeue --instance lists the Dead row written before 150 Published ones', async () => {
    const { instanceId, row } = await deadOrder(plane, inventory, viewer);
    await plane.db.prisma.$executeRaw`
      insert into "sagaflow"."outbox" (id, message_id, source_kind, source_id, type, destination, payload, status, published_at)
      select gen_random_uuid(), 'r48-later-' || n, 'process', ${instanceId}, 'NotifyCustomer', 'demo.inventory', '{}'::jsonb,
             'Published', now()
        from generate_series(1, 150) n`;
    expect((await plane.db.prisma.outboxMessage.findUniqueOrThrow({ where: { id: row.id } })).status).toBe('Dead');
    const dry = await cli(['requeue', '--instance', instanceId, '--dry-run'], env);
    expect(dry.out + dry.err).toContain(row.id);
    expect(dry.code, dry.out + dry.err).toBe(0);
  }, 120_000);
});
