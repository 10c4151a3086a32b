import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { apiClient, createTestOperator, signInCookie } from '../../support/test-plane.ts';
import type { ControlPlane } from '../../../src/start-control-plane.ts';
import {
  deadOrder as deadOrderOf,
  reserveRowOf,
  startDeadOutboxPlane,
  type Inventory,
} from '../../support/dead-outbox-plane.ts';
import { runCli as cli } from '../../support/run-cli.ts';

/**
 * ADR 0113: `approve <id>` exits 0 when applied ("a bulk: every item applied"), 2 when not; `approval
 * show` of a bulk "shows its items' outcomes once applied". Only single commands were decided from the
 * CLI in its tests. Here a gated bulk requeue of two Dead rows is approved from the CLI after one of
 * its rows was requeued on its own meanwhile: one item applies, the other is refused.
 */
describe('the CLI decides a bulk approval one of whose items can no longer apply', () => {
  let plane: ControlPlane;
  let inventory: Inventory;
  const cookies = { viewer: '', admin: '' };
  const env = { ana: {}, ben: {} } as Record<'ana' | 'ben', Record<string, string>>;
  beforeAll(async () => {
    ({ plane, inventory } = await startDeadOutboxPlane('r44_bulk_approve'));
    cookies.viewer = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    cookies.admin = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    for (const who of ['ana', 'ben'] as const) {
      const cookie = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
      const { token } = await apiClient(plane.url, cookie).tokens.create.mutate({ name: `${who}-cli` });
      env[who] = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
    }
  });
  afterAll(async () => {
    await plane?.stop();
    inventory?.server.close();
  });

  const statusOf = async (id: string) =>
    (await plane.db.prisma.outboxMessage.findUniqueOrThrow({ where: { id } })).status;
  const requeues = (id: string) =>
    plane.db.prisma.repairCommand.count({ where: { target_id: id, command: 'outbox.requeue', status: 'applied' } });

  it('approve exits 2 saying 1 of 2 applied, show lists each item, a second approve changes nothing', async () => {
    const policy = apiClient(plane.url, cookies.admin).approvalPolicy;
    const dead = [
      await deadOrderOf(plane, inventory, cookies.viewer),
      await deadOrderOf(plane, inventory, cookies.viewer),
    ];
    const [first, second] = dead.map((d) => d.row.id) as [string, string];
    await policy.set.mutate({ gatedCommands: ['outbox.requeue'], bulkThreshold: null });
    const held = await cli(['requeue', first, second, '--reason', 'after the outage'], env.ana);
    expect(held.code, held.err + held.out).toBe(4);
    const approvalId = /approval {4}([0-9a-f-]{36})/.exec(held.out)?.[1] ?? '';
    expect(approvalId).not.toBe('');

    // Meanwhile the first row is requeued on its own (the policy no longer gates it) and delivered.
    await policy.set.mutate({ gatedCommands: [], bulkThreshold: 10 });
    inventory.up.now = true;
    expect((await cli(['requeue', first, '--reason', 'just this one'], env.ana)).code).toBe(0);
    await reserveRowOf(plane, cookies.viewer, dead[0]!.instanceId, 'Published');
    inventory.up.now = false;
    expect(await statusOf(first)).toBe('Published');

    const approved = await cli(['approve', approvalId], env.ben);
    expect(approved.code, approved.err + approved.out).toBe(2);
    expect(approved.out).toContain('applied to 1 of 2');
    expect(approved.out).toMatch(new RegExp(`item\\s+${first}\\s+\\S+`));
    expect(approved.out).toMatch(new RegExp(`item\\s+${second}\\s+applied`));
    expect(await requeues(first)).toBe(1);
    expect(await requeues(second)).toBe(1);

    const shown = await cli(['approval', 'show', approvalId], env.ben);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toMatch(new RegExp(`item\\s+${second}\\s+applied`));

    const again = await cli(['approve', approvalId], env.ben);
    expect(again.code).toBe(2);
    expect(await requeues(first)).toBe(1);
    expect(await requeues(second)).toBe(1);
  });
});
