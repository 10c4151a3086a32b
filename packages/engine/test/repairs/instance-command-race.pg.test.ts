import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ticket } from './support/repair-fixtures.ts';
import { settle, useRaceEngines, who } from './support/race-engines.ts';

/** An operator's process command racing deliver() on one instance (issue 9; support/race-engines.ts). */
describe('an operator command racing deliver() (real PostgreSQL)', () => {
  const engines = useRaceEngines();

  it('an operator command racing deliver() on one instance: exactly one moves it (300 instances)', async () => {
    const { first, workers, operator } = engines;
    const tally = { repair: 0, message: 0 };
    for (let batch = 0; batch < 12; batch++) {
      const keys = Array.from({ length: 25 }, () => `race-${randomUUID().slice(0, 8)}`);
      const instances = await Promise.all(
        keys.map(async (key) => {
          await workers.processes.deliver(ticket, { id: `o-${key}`, type: 'Opened', payload: { key } });
          const r = await workers.processes.deliver(ticket, { id: `r-${key}`, type: 'Reviewed', payload: { key } });
          const row = await first.prisma.sagaInstance.findUniqueOrThrow({ where: { id: r.instanceId! } });
          return { key, id: row.id, version: row.version };
        }),
      );
      const raced = await Promise.all(
        instances.map(async (i, n) => {
          // Every other race sends the message first (each order is asserted the same way below).
          const early =
            n % 2 === 1
              ? workers.processes.deliver(ticket, { id: `re-${i.key}`, type: 'Reopen', payload: { key: i.key } })
              : null;
          const repair = settle(
            operator.repairs.apply({
              kind: 'instance.command',
              target: { instanceId: i.id },
              expected: { state: 'Review', version: i.version },
              command: 'Close',
              input: { resolution: 'closed by an operator' },
              ...who,
              idempotencyKey: randomUUID(),
            }),
          );
          const message =
            early ?? workers.processes.deliver(ticket, { id: `re-${i.key}`, type: 'Reopen', payload: { key: i.key } });
          return { ...i, repair: await repair, message: await message };
        }),
      );
      for (const r of raced) {
        const row = await first.prisma.sagaInstance.findUniqueOrThrow({ where: { id: r.id } });
        const audit = await first.prisma.repairCommand.findMany({ where: { target_id: r.id } });
        expect(audit).toHaveLength(1);
        if (r.repair.ok) {
          tally.repair++;
          expect(row.current_state).toBe('Closed');
          expect(r.message.outcome, 'the message came second and changed nothing').toBe('ignored');
          expect(audit[0]).toMatchObject({ status: 'applied', actual: { state: 'Review', version: r.version } });
        } else {
          tally.message++;
          expect(r.repair.error).toMatchObject({ code: 'repair_conflict', details: { current: { state: 'Open' } } });
          expect(r.message.outcome).toBe('applied');
          expect(row.current_state).toBe('Open');
          expect(audit[0]).toMatchObject({ status: 'conflict', actual: { state: 'Open', version: r.version + 1 } });
        }
        const outbox = await first.prisma.outboxMessage.count({ where: { source_id: r.id, type: 'TicketClosed' } });
        expect(outbox, 'the command queued its message only if it applied').toBe(r.repair.ok ? 1 : 0);
      }
    }
    expect(tally.repair + tally.message).toBe(300);
    console.info(`operator command vs deliver: repair won ${tally.repair}, message won ${tally.message}`);
  });
});
