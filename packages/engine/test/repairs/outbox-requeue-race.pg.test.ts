import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { RepairCommand } from '../../src/index.ts';
import { inProcessTransport } from '../../src/outbox/in-process-transport.ts';
import { publishOutboxBatch } from '../../src/outbox/publish-outbox-batch.ts';
import { waitFor } from '../support/wait-for.ts';
import { ticket } from './support/repair-fixtures.ts';
import { lateTx, settle, useRaceEngines, who } from './support/race-engines.ts';

const logger = pino({ level: 'silent' });

/**
 * outbox.requeue racing the outbox publisher and another operator on real concurrent PostgreSQL
 * connections (ADR 0104; support/race-engines.ts). Each race starts once the database shows both
 * sides in place (a lock wait seen in pg_stat_activity), never after a sleep.
 */
describe('outbox.requeue racing the publisher (real PostgreSQL)', () => {
  const engines = useRaceEngines();
  const delivered: string[] = [];
  let downstreamUp = false;
  const reviews = inProcessTransport((m) => {
    if (!downstreamUp) throw new Error('reviews service down');
    delivered.push(m.messageId);
  });
  const pass = () =>
    publishOutboxBatch({ db: engines.first, routes: { reviews }, logger, config: { max_attempts: 1 } });

  /** A ticket whose first ReviewStarted is Dead and (with `later`) whose second, written after it died, is Pending. */
  async function deadThenPending(later = true) {
    const { workers, first } = engines;
    const key = `rq-${randomUUID().slice(0, 8)}`;
    await workers.processes.deliver(ticket, { id: `o-${key}`, type: 'Opened', payload: { key } });
    const r = await workers.processes.deliver(ticket, { id: `r-${key}`, type: 'Reviewed', payload: { key } });
    downstreamUp = false;
    expect(await pass()).toMatchObject({ dead: 1 });
    if (!later)
      return {
        dead: await first.prisma.outboxMessage.findFirstOrThrow({ where: { source_id: r.instanceId! } }),
        later: null,
      };
    await workers.processes.deliver(ticket, { id: `re-${key}`, type: 'Reopen', payload: { key } });
    await workers.processes.deliver(ticket, { id: `r2-${key}`, type: 'Reviewed', payload: { key } });
    const rows = await first.prisma.outboxMessage.findMany({
      where: { source_id: r.instanceId! },
      orderBy: { seq: 'asc' },
    });
    expect(rows.map((x) => x.status)).toEqual(['Dead', 'Pending']);
    return { dead: rows[0]!, later: rows[1]! };
  }

  const requeue = (row: { id: string; attempts: number }, idempotencyKey = randomUUID()) =>
    ({
      kind: 'outbox.requeue',
      target: { outboxId: row.id },
      expected: { status: 'Dead', attempts: row.attempts },
      ...who,
      idempotencyKey,
    }) as RepairCommand;

  it('a publisher pass during a requeue neither waits for it nor claims its row; the next pass sends it once', async () => {
    const { first, operator } = engines;
    await first.prisma.$executeRaw`delete from "sagaflow"."outbox"`;
    const { dead, later: laterRow } = await deadThenPending();
    const later = laterRow!;
    delivered.length = 0;
    downstreamUp = true;

    // The gate: an uncommitted audit row with the requeue's key. The requeue locks and updates the
    // outbox row, then waits on that key's unique index before it can write its own audit row.
    const key = randomUUID();
    let openGate!: () => void;
    const gateOpened = new Promise<void>((resolve) => (openGate = resolve));
    const gate = settle(
      first.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`
          insert into "sagaflow"."repair_commands"
            (id, actor, command, target_type, target_id, expected, actual, result, reason, idempotency_key, status)
          values (gen_random_uuid(), 'gate', 'outbox.requeue', 'outbox', ${dead.id}, '{}', '{}', '{}', 'gate', ${key}, 'applied')`;
        await gateOpened;
        throw new Error('gate rolled back');
      }, lateTx),
    );
    await waitFor('the gate row to be written', async () =>
      (
        await first.prisma.$queryRaw<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
           where state = 'idle in transaction' and query like '%insert into "sagaflow"."repair_commands"%'`
      )[0]!.n > 0
        ? true
        : undefined,
    );
    const requeued = settle(operator.repairs.apply(requeue(dead, key)));
    await waitFor('the requeue to wait on its audit row, the outbox row locked and updated', async () =>
      (
        await first.prisma.$queryRaw<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
           where wait_event_type = 'Lock' and query like '%repair_commands%'`
      )[0]!.n > 0
        ? true
        : undefined,
    );

    // The row is held: another writer could not take it now.
    const held = await settle(
      first.prisma.$transaction(
        (tx) => tx.$queryRaw`select id from "sagaflow"."outbox" where id = ${dead.id}::uuid for update nowait`,
      ),
    );
    expect(held.ok).toBe(false);
    // A pass now sees the row Dead (the requeue has not committed): it claims and sends only the later row.
    expect(await pass()).toMatchObject({ claimed: 1, published: 1 });
    expect(delivered).toEqual([later.message_id]);

    openGate();
    expect((await gate).ok).toBe(false);
    const result = await requeued;
    expect(result.ok && result.value).toMatchObject({ status: 'applied', replayed: false });
    expect(await pass()).toMatchObject({ claimed: 1, published: 1 });
    expect(await pass()).toMatchObject({ claimed: 0 });
    expect(delivered).toEqual([later.message_id, dead.message_id]);
    const rows = await first.prisma.outboxMessage.findMany({ where: { id: { in: [dead.id, later.id] } } });
    expect(rows.map((r) => [r.id, r.status, r.attempts]).sort()).toEqual(
      [
        [dead.id, 'Published', 1],
        [later.id, 'Published', 1],
      ].sort(),
    );
    const audit = await first.prisma.repairCommand.findMany({ where: { target_id: dead.id } });
    expect(audit).toMatchObject([{ status: 'applied', idempotency_key: key, actor: who.actor }]);
  });

  it('two operators requeue one Dead row at once: one applies, the other conflicts on expected.status (20 rows)', async () => {
    const { first, operator, workers } = engines;
    await first.prisma.$executeRaw`delete from "sagaflow"."outbox"`;
    const deadRows = [];
    for (let n = 0; n < 20; n++) deadRows.push((await deadThenPending(false)).dead);
    delivered.length = 0;
    downstreamUp = true;
    const raced = await Promise.all(
      deadRows.map(async (row) => {
        // One operator through the workers' pool, the other through the operator's: two connections.
        const [a, b] = await Promise.all([
          settle(operator.repairs.apply(requeue(row))),
          settle(workers.repairs.apply(requeue(row))),
        ]);
        return { row, outcomes: [a, b] };
      }),
    );
    for (const { row, outcomes } of raced) {
      expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
      const lost = outcomes.find((o) => !o.ok);
      expect(lost && !lost.ok && lost.error).toMatchObject({
        code: 'repair_conflict',
        field: 'expected.status',
        details: { current: { status: 'Pending', attempts: 0 } },
      });
      const audit = await first.prisma.repairCommand.findMany({ where: { target_id: row.id } });
      expect(audit.map((r) => r.status).sort()).toEqual(['applied', 'conflict']);
    }
    for (let n = 0; n < 10 && (await pass()).claimed > 0; n++);
    const sent = new Set(deadRows.map((r) => r.message_id));
    expect(delivered.filter((id) => sent.has(id)).sort()).toEqual([...sent].sort());
  });
});
