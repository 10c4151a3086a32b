import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { apiClient, createTestOperator, rawCall, rejection, signInCookie } from './support/test-plane.ts';
import type { ControlPlane } from '../src/start-control-plane.ts';
import {
  deadOrder as deadOrderOf,
  reserveRowOf,
  startDeadOutboxPlane,
  type Inventory,
} from './support/dead-outbox-plane.ts';
import { runCli } from './support/run-cli.ts';

const cli = runCli;

describe('outbox.requeue over HTTP and from the CLI: roles, bad input, the instance page and a real publisher (PostgreSQL)', () => {
  let plane: ControlPlane;
  let inventory: Inventory;
  const cookies = { viewer: '', operator: '' };
  beforeAll(async () => {
    ({ plane, inventory } = await startDeadOutboxPlane('outbox_requeue_api'));
    for (const role of ['viewer', 'operator'] as const)
      cookies[role] = await signInCookie(plane.url, await createTestOperator(plane, role));
  });
  afterAll(async () => {
    await plane?.stop();
    inventory?.server.close();
  });

  const rowOf = (instanceId: string, status: string) => reserveRowOf(plane, cookies.viewer, instanceId, status);
  const deadOrder = () => deadOrderOf(plane, inventory, cookies.viewer);

  const requeue = (row: { id: string; status: string; attempts: number }, key = randomUUID()) => ({
    kind: 'outbox.requeue',
    target: { outboxId: row.id },
    expected: { status: row.status, attempts: row.attempts },
    reason: 'inventory is back',
    idempotencyKey: key,
  });

  it('the instance page shows each outbox row with its id, status, attempts and last error', async () => {
    const { row } = await deadOrder();
    expect(row).toMatchObject({ status: 'Dead', attempts: 1, destination: 'demo.inventory' });
    expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(row.lastError).toMatch(/503/);
    expect(await apiClient(plane.url, cookies.viewer).outbox.get.query({ id: row.id })).toMatchObject({
      id: row.id,
      status: 'Dead',
      attempts: 1,
      lastError: row.lastError,
    });
    expect(await rejection(apiClient(plane.url, cookies.viewer).outbox.get.query({ id: randomUUID() }))).toMatchObject({
      status: 404,
    });
  });

  it('a viewer is refused (403) on preview and apply, and nothing is written', async () => {
    const { row } = await deadOrder();
    for (const [path, type] of [
      ['repairs.preview', 'query'],
      ['repairs.applyOne', 'mutation'],
    ] as const) {
      const r = await rawCall(plane.url, path, { type, input: requeue(row), cookie: cookies.viewer });
      expect(r.status).toBe(403);
    }
    expect(await plane.db.prisma.repairCommand.count({ where: { target_id: row.id } })).toBe(0);
    expect(await plane.db.prisma.outboxMessage.findUnique({ where: { id: row.id } })).toMatchObject({ status: 'Dead' });
  });

  it('bad input is a 400 naming the field, and changes nothing', async () => {
    const { row } = await deadOrder();
    const operator = apiClient(plane.url, cookies.operator);
    const cases: [unknown, string][] = [
      [{ ...requeue(row), target: { outboxId: 'not-a-uuid' } }, 'target.outboxId'],
      [{ ...requeue(row), target: { instanceId: row.id } }, 'target.outboxId'],
      [{ ...requeue(row), expected: { status: 'Gone', attempts: 1 } }, 'expected.status'],
      [{ ...requeue(row), expected: { status: 'Dead', attempts: -1 } }, 'expected.attempts'],
    ];
    for (const [input, field] of cases) {
      const r = await rejection(operator.repairs.applyOne.mutate(input as { kind: string }));
      expect(r, JSON.stringify(input)).toMatchObject({ status: 400 });
      expect(r.field, r.message).toBe(`input.${field}`);
    }
    expect(await plane.db.prisma.repairCommand.count({ where: { target_id: row.id } })).toBe(0);
  });

  it('an operator requeues a Dead row; once the service is up it is published once more, and the history download shows the repair', async () => {
    const { instanceId, row } = await deadOrder();
    const operator = apiClient(plane.url, cookies.operator);
    const preview = await operator.repairs.preview.query(requeue(row));
    expect(preview).toMatchObject({ applicable: true, expectedHolds: true });
    inventory.up.now = true;
    const applied = await operator.repairs.applyOne.mutate(requeue(row));
    expect(applied).toMatchObject({ status: 'applied', target: { type: 'outbox', id: row.id } });
    const published = await rowOf(instanceId, 'Published');
    expect(published.attempts).toBe(1);
    expect(inventory.got.filter((id) => id === row.messageId)).toHaveLength(1);

    // Published now: a second requeue is refused (409, with its blocker), and changes nothing.
    const refused = await rawCall(plane.url, 'repairs.applyOne', {
      type: 'mutation',
      input: requeue(published),
      cookie: cookies.operator,
    });
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toContain('is Published: it was delivered, there is nothing to requeue');

    const download = await fetch(`${plane.url}/history/instances/${instanceId}`, {
      headers: { cookie: cookies.viewer },
    });
    expect(download.status).toBe(200);
    const body = (await download.json()) as { repairs: { command: string; target_id: string; status: string }[] };
    expect(body.repairs.map((r) => [r.command, r.target_id, r.status])).toEqual([
      ['outbox.requeue', row.id, 'applied'],
      ['outbox.requeue', row.id, 'refused'],
    ]);
  });

  it("the CLI lists an instance's Dead rows and requeues one: dry run exits 0, apply 0, a stale or Published one 2", async () => {
    const { instanceId, row } = await deadOrder();
    const { token } = await apiClient(plane.url, cookies.operator).tokens.create.mutate({ name: 'requeue-cli' });
    const env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };

    const show = await cli(['instance', 'show', instanceId], env);
    expect(show.code, show.err).toBe(0);
    expect(show.out).toContain(row.id);
    expect(show.out).toContain('sagaflow requeue <outbox-row-id>');

    const dry = await cli(['requeue', row.id, '--dry-run'], env);
    expect(dry.code, dry.err).toBe(0);
    expect(dry.out).toContain(`outbox.requeue on outbox row ${row.id} would apply`);
    expect(dry.out).toContain('drafted against {"status":"Dead","attempts":1}');

    const stale = await cli(['repair', 'outbox.requeue', row.id, '--reason', 'x', '--expect-attempts', '3'], env);
    expect(stale.code, stale.out).toBe(2);
    expect(stale.err).toContain('expected.attempts differs');
    expect(await plane.db.prisma.outboxMessage.findUnique({ where: { id: row.id } })).toMatchObject({ status: 'Dead' });

    inventory.up.now = true;
    const applied = await cli(['repair', 'outbox.requeue', row.id, '--reason', 'inventory is back'], env);
    expect(applied.code, applied.err).toBe(0);
    expect(applied.out).toContain(`outbox.requeue applied to outbox row ${row.id}`);
    const published = await rowOf(instanceId, 'Published');

    const again = await cli(['requeue', published.id, '--reason', 'once more'], env);
    expect(again.code, again.out).toBe(2);
    expect(again.err).toContain('is Published: it was delivered, there is nothing to requeue');
    expect(inventory.got.filter((id) => id === row.messageId)).toHaveLength(1);

    const usage = await cli(['requeue', 'not-a-uuid', '--reason', 'x'], env);
    expect(usage.code).toBe(64);
    expect(usage.err).toContain(`outbox-id must be an outbox's UUID, got "not-a-uuid"`);
  });

  it('the bulk form requeues every Dead row after an outage in one request, one audit row each', async () => {
    const dead = [await deadOrder(), await deadOrder()];
    inventory.up.now = true;
    const result = await apiClient(plane.url, cookies.operator).repairs.applyBulk.mutate({
      kind: 'outbox.requeue',
      reason: 'inventory is back after the outage',
      idempotencyKey: randomUUID(),
      items: dead.map(({ row }) => ({
        target: { outboxId: row.id },
        expected: { status: 'Dead', attempts: row.attempts },
      })),
    });
    expect(result).toMatchObject({ applied: 2 });
    for (const { instanceId, row } of dead) {
      await rowOf(instanceId, 'Published');
      expect(inventory.got.filter((id) => id === row.messageId)).toHaveLength(1);
      expect(await plane.db.prisma.repairCommand.count({ where: { target_id: row.id, status: 'applied' } })).toBe(1);
    }
  });
});
