import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { EngineError, type RepairCommand } from '../../src/index.ts';
import { inProcessTransport } from '../../src/outbox/in-process-transport.ts';
import type { OutboxEnvelope } from '../../src/outbox/outbox-envelope.ts';
import { publishOutboxBatch } from '../../src/outbox/publish-outbox-batch.ts';
import { clearOutbox } from '../outbox/seed-outbox.ts';
import { testDbKind } from '../support/test-database.ts';
import { useCatalogue } from './support/catalogue-harness.ts';
import { ticket } from './support/repair-fixtures.ts';
import { addedRows, snapshotTables, without } from './support/snapshot.ts';

const logger = pino({ level: 'silent' });

/** outbox.requeue (ADR 0104): a Dead outbox row sent again, through the same repair primitives as any other. */
describe(`outbox repairs (${testDbKind()})`, () => {
  const c = useCatalogue();
  const { ticketAt, who, proveCommand } = c;
  let delivered: OutboxEnvelope[];
  let downstreamUp: boolean;
  const reviews = inProcessTransport((m) => {
    if (!downstreamUp) throw new Error('reviews service: 503 Service Unavailable');
    delivered.push(m);
  });
  /** One publisher pass on the engine's clock, as the control plane's loop runs it. */
  const pass = (maxAttempts = 2) =>
    publishOutboxBatch({
      db: c.t.db,
      routes: { reviews },
      clock: c.t.clock,
      logger,
      config: { max_attempts: maxAttempts, backoff: { base_delay_ms: 1000, max_delay_ms: 1000 } },
    });

  beforeEach(async () => {
    await clearOutbox(c.t.db);
    delivered = [];
    downstreamUp = false;
  });

  /** A ticket whose ReviewStarted message used up its two attempts: Dead, with its last error. */
  async function deadRow() {
    const i = await ticketAt('Review');
    const row = await c.t.db.prisma.outboxMessage.findFirstOrThrow({ where: { source_id: i.id } });
    expect(await pass()).toMatchObject({ claimed: 1, retried: 1 });
    c.t.clock.advance(1000);
    expect(await pass()).toMatchObject({ claimed: 1, dead: 1 });
    const dead = await c.t.db.prisma.outboxMessage.findUniqueOrThrow({ where: { id: row.id } });
    expect(dead).toMatchObject({ status: 'Dead', attempts: 2, last_error: 'reviews service: 503 Service Unavailable' });
    return { instance: i, row: dead };
  }

  const requeue = (row: { id: string; status: string; attempts: number }, extra: object = {}) =>
    ({
      kind: 'outbox.requeue',
      target: { outboxId: row.id },
      expected: { status: row.status, attempts: row.attempts },
      ...who,
      idempotencyKey: randomUUID(),
      ...extra,
    }) as RepairCommand;

  it('a requeued Dead row is published exactly once more by the next publisher pass and ends Published', async () => {
    const { row } = await deadRow();
    // Preview writes nothing, a stale expectation changes nothing, apply does what the preview said, a replay nothing twice.
    const { applied, after } = await proveCommand(requeue(row));
    expect(applied.target).toEqual({ type: 'outbox', id: row.id });
    expect(applied.effects.transitions).toEqual([{ subject: `outbox ${row.id}`, from: 'Dead', to: 'Pending' }]);
    expect(applied.effects.notes[0]).toBe(
      `sends ReviewStarted to reviews again on the publisher's next pass, with the same message id ${row.message_id} (consumers dedupe by it)`,
    );
    // The audit row is in the same table and shape as every repair's, and the row waits, due now, its error kept.
    expect(addedRows({}, after, 'repair_commands')).toContainEqual(
      expect.objectContaining({
        id: applied.id,
        command: 'outbox.requeue',
        target_type: 'outbox',
        target_id: row.id,
        expected: { status: 'Dead', attempts: 2 },
        status: 'applied',
      }),
    );
    const waiting = await c.t.db.prisma.outboxMessage.findUniqueOrThrow({ where: { id: row.id } });
    expect(waiting).toMatchObject({ status: 'Pending', attempts: 0, last_error: row.last_error, published_at: null });
    expect(waiting.available_at.getTime()).toBe(c.t.clock.now().getTime());

    downstreamUp = true;
    expect(await pass()).toMatchObject({ claimed: 1, published: 1 });
    expect(await pass()).toMatchObject({ claimed: 0 });
    expect(delivered.map((m) => m.messageId)).toEqual([row.message_id]);
    expect(delivered[0]).toMatchObject({ type: 'ReviewStarted', attempt: 1 });
    expect(await c.t.db.prisma.outboxMessage.findUniqueOrThrow({ where: { id: row.id } })).toMatchObject({
      status: 'Published',
      attempts: 1,
    });
  });

  it('a requeue whose expected attempts changed is a conflict naming expected.attempts, and changes nothing', async () => {
    const { row } = await deadRow();
    const before = await snapshotTables(c.t.db);
    const err = await c.t.engine.repairs.apply(requeue({ ...row, attempts: 1 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err).toMatchObject({
      code: 'repair_conflict',
      field: 'expected.attempts',
      details: { current: { exists: true, status: 'Dead', attempts: 2 } },
    });
    const after = await snapshotTables(c.t.db);
    expect(without(after, 'repair_commands')).toEqual(without(before, 'repair_commands'));
    expect(addedRows(before, after, 'repair_commands')).toMatchObject([
      { command: 'outbox.requeue', status: 'conflict' },
    ]);
  });

  it('the same idempotency key returns the first result and does not requeue a row that died again', async () => {
    const { row } = await deadRow();
    const cmd = requeue(row);
    const first = await c.t.engine.repairs.apply(cmd);
    // It fails twice more and is Dead again at attempts 2: the same expectation as the first command drafted.
    c.t.clock.advance(1000);
    await pass();
    c.t.clock.advance(1000);
    expect(await pass()).toMatchObject({ dead: 1 });
    const before = await snapshotTables(c.t.db);
    const again = await c.t.engine.repairs.apply(cmd);
    expect(again).toMatchObject({ id: first.id, replayed: true, status: 'applied', effects: first.effects });
    expect(await snapshotTables(c.t.db)).toEqual(before);
    expect(await c.t.db.prisma.outboxMessage.findUniqueOrThrow({ where: { id: row.id } })).toMatchObject({
      status: 'Dead',
    });
  });

  it('a Pending or Published row is refused (repair_refused): nothing to requeue, nothing changes', async () => {
    const i = await ticketAt('Review');
    const pending = await c.t.db.prisma.outboxMessage.findFirstOrThrow({ where: { source_id: i.id } });
    for (const state of ['Pending', 'Published'] as const) {
      if (state === 'Published') {
        downstreamUp = true;
        await pass();
      }
      const row = await c.t.db.prisma.outboxMessage.findUniqueOrThrow({ where: { id: pending.id } });
      expect(row.status).toBe(state);
      const preview = await c.t.engine.repairs.preview(requeue(row));
      expect(preview).toMatchObject({ expectedHolds: true, applicable: false });
      const before = await snapshotTables(c.t.db);
      const err = await c.t.engine.repairs.apply(requeue(row)).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'repair_refused', field: 'target.outboxId' });
      expect((err as EngineError).message).toContain(`outbox row ${row.id} is ${state}`);
      expect((err as EngineError).message).toContain('nothing to requeue');
      const after = await snapshotTables(c.t.db);
      expect(without(after, 'repair_commands')).toEqual(without(before, 'repair_commands'));
    }
  });

  it('the preview says the message will arrive after the later ones its source already published', async () => {
    const { instance, row } = await deadRow();
    // The instance moves on after its message died: its next messages are published without it.
    await c.t.engine.processes.deliver(ticket, {
      id: `reopen-${instance.key}`,
      type: 'Reopen',
      payload: { key: instance.key },
    });
    await c.t.engine.processes.deliver(ticket, {
      id: `rev2-${instance.key}`,
      type: 'Reviewed',
      payload: { key: instance.key },
    });
    downstreamUp = true;
    expect(await pass()).toMatchObject({ published: 1 });
    const preview = await c.t.engine.repairs.preview(requeue(row));
    expect(preview.effects.notes).toContain(
      `1 later message(s) of instance ${instance.id} were already published: this one arrives after them (the per-source order was broken when it died)`,
    );
  });

  it('an unknown outbox id is not found, and a malformed one is bad input naming target.outboxId', async () => {
    await expect(
      c.t.engine.repairs.preview(requeue({ id: randomUUID(), status: 'Dead', attempts: 1 })),
    ).rejects.toMatchObject({ code: 'outbox_not_found' });
    await expect(
      c.t.engine.repairs.apply(requeue({ id: 'not-a-uuid', status: 'Dead', attempts: 1 })),
    ).rejects.toMatchObject({ code: 'invalid_input', field: 'target.outboxId' });
    await expect(
      c.t.engine.repairs.apply(requeue({ id: randomUUID(), status: 'Gone', attempts: 1 })),
    ).rejects.toMatchObject({ code: 'invalid_input', field: 'expected.status' });
  });

  it('an id in upper case is stored in lower case on the audit row', async () => {
    const { row } = await deadRow();
    const r = await c.t.engine.repairs.apply(requeue({ ...row, id: row.id.toUpperCase() }));
    expect(r.target).toEqual({ type: 'outbox', id: row.id });
  });

  it('the bulk form requeues every Dead row after an outage, one audit row each', async () => {
    const a = await deadRow();
    const b = await deadRow();
    const key = randomUUID();
    const result = await c.t.engine.repairs.applyBulk({
      kind: 'outbox.requeue',
      ...who,
      idempotencyKey: key,
      items: [a.row, b.row].map((r) => ({ target: { outboxId: r.id }, expected: { status: 'Dead', attempts: 2 } })),
    });
    expect(result).toMatchObject({ applied: 2 });
    expect(result.items.map((i) => i.outcome)).toEqual(['applied', 'applied']);
    downstreamUp = true;
    expect(await pass()).toMatchObject({ published: 2 });
    expect(delivered.map((m) => m.messageId).sort()).toEqual([a.row.message_id, b.row.message_id].sort());
  });

  it('a gated requeue waits for a second operator; retention keeps its row meanwhile, and approving it late is a conflict', async () => {
    const { t } = c;
    const before = await t.engine.approvals.policy();
    await t.engine.approvals.setPolicy({ gatedCommands: ['outbox.requeue'], bulkThreshold: 10 }, { actor: 'admin' });
    try {
      const { row } = await deadRow();
      const drafted = await t.engine.approvals.submit(requeue(row));
      expect(drafted).toMatchObject({ status: 'awaiting_approval' });
      const approvalId = (drafted as { approvalId: string }).approvalId;
      expect(await t.db.prisma.outboxMessage.findUniqueOrThrow({ where: { id: row.id } })).toMatchObject({
        status: 'Dead',
      });
      // Meanwhile someone requeues it directly, and it is published and ages past the cutoff.
      await t.engine.repairs.apply(requeue(row));
      downstreamUp = true;
      expect(await pass()).toMatchObject({ published: 1 });
      t.clock.advance(60_000);
      expect((await t.engine.retention.prune({ olderThanSeconds: 10 })).deleted.outbox).toBe(0);
      expect(await t.db.prisma.outboxMessage.findUnique({ where: { id: row.id } })).not.toBeNull();
      // The second operator decides against the row as it is now: nothing to requeue.
      await expect(t.engine.approvals.approve(approvalId, 'ben')).rejects.toMatchObject({
        code: 'repair_conflict',
        field: 'expected.status',
      });
      expect(await t.engine.approvals.get(approvalId)).toMatchObject({ status: 'conflict' });
      expect((await t.engine.retention.prune({ olderThanSeconds: 10 })).deleted.outbox).toBe(1);
    } finally {
      await t.engine.approvals.setPolicy(
        { gatedCommands: before.gatedCommands, bulkThreshold: before.bulkThreshold },
        { actor: 'admin' },
      );
    }
  });
});
