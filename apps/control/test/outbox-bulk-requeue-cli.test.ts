import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { apiClient, createTestOperator, signInCookie } from './support/test-plane.ts';
import type { ControlPlane } from '../src/start-control-plane.ts';
import {
  deadOrder as deadOrderOf,
  reserveRowOf,
  startDeadOutboxPlane,
  type Inventory,
} from './support/dead-outbox-plane.ts';
import { runCli as cli } from './support/run-cli.ts';

describe('a bulk outbox.requeue from the CLI (ADR 0104): real control plane, real publisher, real child process (PostgreSQL)', () => {
  let plane: ControlPlane;
  let inventory: Inventory;
  const cookies = { viewer: '', operator: '', second: '', admin: '' };
  let env: Record<string, string>;
  beforeAll(async () => {
    ({ plane, inventory } = await startDeadOutboxPlane('outbox_bulk_requeue_cli'));
    cookies.viewer = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    cookies.operator = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    cookies.second = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    cookies.admin = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    const { token } = await apiClient(plane.url, cookies.operator).tokens.create.mutate({ name: 'bulk-requeue-cli' });
    env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
  });
  afterAll(async () => {
    await plane?.stop();
    inventory?.server.close();
  });

  const rowOf = (instanceId: string, status: string) => reserveRowOf(plane, cookies.viewer, instanceId, status);
  const deadOrder = () => deadOrderOf(plane, inventory, cookies.viewer);

  const statusOf = async (id: string) =>
    (await plane.db.prisma.outboxMessage.findUniqueOrThrow({ where: { id } })).status;
  const audit = (id: string) =>
    plane.db.prisma.repairCommand.findMany({
      where: { target_id: id, command: 'outbox.requeue' },
      select: { status: true, reason: true },
    });

  it('several ids: a dry run previews each and writes nothing; apply requeues each once, one audit row each, a Published one left out with why', async () => {
    const dead = [await deadOrder(), await deadOrder(), await deadOrder()];
    const done = await deadOrder();
    inventory.up.now = true;
    expect((await cli(['requeue', done.row.id, '--reason', 'first'], env)).code).toBe(0);
    const published = await rowOf(done.instanceId, 'Published');
    inventory.up.now = false;
    const ids = [...dead.map((d) => d.row.id), published.id];

    const dry = await cli(['requeue', ...ids, '--dry-run'], env);
    expect(dry.code, dry.err).toBe(0);
    expect(dry.out).toContain('outbox.requeue would requeue 3 Dead rows; 1 left out (dry run: nothing written)');
    for (const { row } of dead)
      expect(dry.out).toMatch(new RegExp(`${row.id}  ReserveInventory → demo.inventory, would apply`));
    expect(dry.out).toContain(
      `left out    ${published.id} is Published: it was delivered, there is nothing to requeue`,
    );
    for (const { row } of dead) {
      expect(await statusOf(row.id)).toBe('Dead');
      expect(await audit(row.id)).toEqual([]);
    }

    const noReason = await cli(['requeue', ...ids], env);
    expect(noReason.code).toBe(64);
    expect(noReason.err).toContain('needs --reason');

    inventory.up.now = true;
    const key = `bulk-${randomUUID()}`;
    const applied = await cli(['requeue', ...ids, '--reason', 'inventory is back', '--idempotency-key', key], env);
    expect(applied.code, applied.err).toBe(0);
    expect(applied.out).toContain('outbox.requeue requeued 3 Dead rows; 1 left out: applied to 3 of 3');
    for (const { instanceId, row } of dead) {
      expect(applied.out).toMatch(new RegExp(`${row.id}  applied, audit row [0-9a-f-]{36}`));
      await rowOf(instanceId, 'Published');
      expect(inventory.got.filter((m) => m === row.messageId)).toHaveLength(1);
      expect(await audit(row.id)).toEqual([{ status: 'applied', reason: 'inventory is back' }]);
    }
    expect(await audit(published.id)).toEqual([{ status: 'applied', reason: 'first' }]);
    // The audit trail finds a requeue by its outbox row's id.
    const trail = await apiClient(plane.url, cookies.viewer).audit.page.query({
      source: 'repair',
      target: dead[0]!.row.id,
    });
    expect(trail.items.map((e) => [e.action, e.targetType, e.outcome, e.reason])).toEqual([
      ['outbox.requeue', 'outbox', 'applied', 'inventory is back'],
    ]);
    expect(inventory.got.filter((m) => m === published.messageId)).toHaveLength(1);

    // Run again, same key: every row is Published now, so nothing is left to send: refused (2), nothing done twice.
    const again = await cli(['requeue', ...ids, '--reason', 'inventory is back', '--idempotency-key', key], env);
    expect(again.code, again.out).toBe(2);
    expect(again.err).toContain('nothing to requeue: no Dead row among the ones named');
    for (const { row } of dead) expect(await audit(row.id)).toHaveLength(1);
  });

  it('--instance requeues every Dead row of the instance; --json says what was sent and left out', async () => {
    const a = await deadOrder();
    const b = await deadOrder();
    inventory.up.now = true;
    const r = await cli(
      ['requeue', '--instance', a.instanceId, '--instance', b.instanceId, '--reason', 'back', '--json'],
      env,
    );
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out) as { result: { applied: number; items: { target: { id: string } }[] }; leftOut: [] };
    expect(doc.result.applied).toBe(2);
    expect(doc.result.items.map((i) => i.target.id).sort()).toEqual([a.row.id, b.row.id].sort());
    expect(doc.leftOut).toEqual([]);
    for (const { instanceId, row } of [a, b]) {
      await rowOf(instanceId, 'Published');
      expect(inventory.got.filter((m) => m === row.messageId)).toHaveLength(1);
    }
    // Nothing Dead is left on either instance: said, and exit 2.
    const none = await cli(['requeue', '--instance', a.instanceId, '--reason', 'again'], env);
    expect(none.code).toBe(2);
    expect(none.err).toContain('nothing to requeue');
  });

  it('when the policy gates outbox.requeue the bulk waits as one approval (exit 4, nothing changed); the same key drafts nothing twice; approved, each row is requeued once', async () => {
    await apiClient(plane.url, cookies.admin).approvalPolicy.set.mutate({
      gatedCommands: ['outbox.requeue'],
      bulkThreshold: null,
    });
    try {
      const dead = [await deadOrder(), await deadOrder()];
      const key = `bulk-${randomUUID()}`;
      const args = ['requeue', ...dead.map((d) => d.row.id), '--reason', 'after the outage', '--idempotency-key', key];
      const held = await cli(args, env);
      expect(held.code, held.err).toBe(4);
      expect(held.out).toContain("is waiting for another operator's approval");
      const approvalId = /approval {4}([0-9a-f-]{36})/.exec(held.out)?.[1];
      expect(approvalId).toBeDefined();
      for (const { row } of dead) {
        expect(await statusOf(row.id)).toBe('Dead');
        expect(await audit(row.id)).toEqual([]);
      }
      const replay = await cli(args, env);
      expect(replay.code, replay.err).toBe(4);
      expect(replay.out).toContain(`approval    ${approvalId}`);
      expect(await plane.db.prisma.repairApproval.count({ where: { idempotency_key: key } })).toBe(1);
      inventory.up.now = true;
      const approved = await apiClient(plane.url, cookies.second).approvals.approve.mutate({ id: approvalId! });
      expect(approved).toMatchObject({ status: 'applied' });
      for (const { instanceId, row } of dead) {
        await rowOf(instanceId, 'Published');
        expect(inventory.got.filter((m) => m === row.messageId)).toHaveLength(1);
        expect(await audit(row.id)).toEqual([{ status: 'applied', reason: 'after the outage' }]);
      }
    } finally {
      await apiClient(plane.url, cookies.admin).approvalPolicy.set.mutate({ gatedCommands: [], bulkThreshold: 10 });
    }
  });

  it('--dead drafts against the longest-dead rows of the outbox (of one destination, at most --limit) as outbox.dead lists them', async () => {
    const dead = [await deadOrder(), await deadOrder()];
    const listed = await apiClient(plane.url, cookies.viewer).outbox.dead.query({ destination: 'demo.inventory' });
    expect(listed.map((r) => r.id)).toEqual(expect.arrayContaining(dead.map((d) => d.row.id)));
    expect(listed.every((r) => r.status === 'Dead')).toBe(true);

    const one = await cli(['requeue', '--dead', '--limit', '1', '--dry-run', '--json'], env);
    expect(one.code, one.err).toBe(0);
    expect((JSON.parse(one.out) as { command: { items: unknown[] } }).command.items).toHaveLength(1);
    const elsewhere = await cli(['requeue', '--dead', '--destination', 'demo.nowhere', '--reason', 'x'], env);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.err).toContain('nothing to requeue: no Dead row in the outbox');

    inventory.up.now = true;
    const all = await cli(
      ['requeue', '--dead', '--destination', 'demo.inventory', '--reason', 'after the outage'],
      env,
    );
    expect(all.code, all.err).toBe(0);
    for (const { instanceId, row } of dead) {
      await rowOf(instanceId, 'Published');
      expect(inventory.got.filter((m) => m === row.messageId)).toHaveLength(1);
      expect(await audit(row.id)).toEqual([{ status: 'applied', reason: 'after the outage' }]);
    }
    expect(await apiClient(plane.url, cookies.viewer).outbox.dead.query({ destination: 'demo.inventory' })).toEqual([]);
    const misuse = await cli(['requeue', dead[0]!.row.id, dead[1]!.row.id, '--limit', '3', '--reason', 'x'], env);
    expect(misuse.code).toBe(64);
    expect(misuse.err).toContain('requeue takes --destination and --limit only with --dead');
  });

  it('bad command lines are usage errors (64) and send nothing', async () => {
    const { row } = await deadOrder();
    const cases: [string[], string][] = [
      [['requeue', row.id, 'not-a-uuid', '--reason', 'x'], `outbox-id must be an outbox's UUID, got "not-a-uuid"`],
      [['requeue', '--instance', 'nope', '--reason', 'x'], `instance-id must be an instance's UUID, got "nope"`],
      [
        ['requeue', row.id, randomUUID(), '--expect-attempts', '1', '--reason', 'x'],
        'requeue does not take --expect-attempts',
      ],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args, env);
      expect(r.code, r.err).toBe(64);
      expect(r.err).toContain(message);
    }
    expect(await audit(row.id)).toEqual([]);
    expect(await statusOf(row.id)).toBe('Dead');
  });
});
