import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/index.ts';
import { processManagerOn } from '../../process/support/process-harness.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * Review 29. Invariant 4: process state, outbox rows and the inbox record commit together. A
 * command's outbox `message_id` is `<process>/<causation id>/<index>` (ADR 0008) and the insert is
 * `on conflict (message_id) do nothing`, so that a retried delivery cannot queue a command twice.
 * Process names and message ids may both contain "/", so two different processes handling two
 * different messages can derive the same id: the second command is then dropped without a word,
 * while its instance's transition commits as if it had been queued.
 */
function billing(name: string) {
  return defineProcess({
    name,
    states: ['Open', 'Charged'],
    initial: 'Open',
    final: ['Charged'],
    data: z.object({ key: z.string() }),
    initialData: (key) => ({ key }),
    messages: { Charge: z.object({ key: z.string() }) },
    correlate: (m) => m.payload.key,
    on: {
      Charge: [
        {
          from: 'Open',
          to: 'Charged',
          then: (d) => ({ emit: [{ type: 'ChargeCard', destination: 'payments', payload: { key: d.key } }] }),
        },
      ],
    },
  });
}

describe(`an outbox command id two processes derive alike (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('each applied transition that emits a command has its own outbox row', async () => {
    const billingA = billing('review29-billing');
    const billingB = billing('review29-billing/refunds');
    const { pm } = processManagerOn(db, { processes: [billingA, billingB] });
    const evt = `evt-${randomUUID().slice(0, 8)}`;
    // "review29-billing" + "refunds/<evt>" and "review29-billing/refunds" + "<evt>": both
    // review29-billing/refunds/<evt>/0.
    const a = await pm.deliver(billingA, { id: `refunds/${evt}`, type: 'Charge', payload: { key: 'a-1' } });
    const b = await pm.deliver(billingB, { id: evt, type: 'Charge', payload: { key: 'b-1' } });
    expect([a.outcome, a.commands, b.outcome, b.commands]).toEqual(['applied', 1, 'applied', 1]);

    const queued = await db.prisma.outboxMessage.findMany({
      where: { source_id: { in: [a.instanceId!, b.instanceId!] } },
      select: { source_id: true, message_id: true },
    });
    expect(queued.map((q) => q.source_id).sort()).toEqual([a.instanceId, b.instanceId].sort());
    // Each part's `/` (and `%`) is escaped, so the parts' boundaries stay apart (ADR 0101).
    expect(queued.map((q) => q.message_id).sort()).toEqual(
      [`review29-billing/refunds%2F${evt}/0`, `review29-billing%2Frefunds/${evt}/0`].sort(),
    );
  });
});
