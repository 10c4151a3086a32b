import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/index.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase } from '../../support/test-database.ts';

/**
 * Review 61, on ADR 0134 §3: "A release gets the time its kept messages need. Its transaction may hold its
 * connection for the limit plus 25 ms per kept message (`keptMessageAllowanceMs`, about 4× the cost
 * measured on a loaded machine)". Review 58 D3 measured that cost on an instance whose data is one number.
 * A kept message's cost grows with the instance's data: each is decided twice by the plan (its new data
 * put through the JSON round trip and the schema), then delivered (the state read, decoded, checked and
 * written whole). An order holding a few thousand lines is an ordinary process instance.
 *
 * ARCHITECTURE: "Quarantine … an audited release repair command resumes it from the recorded position";
 * invariant 3: every stuck one has a safe repair; a forced transition refuses a QUARANTINED instance.
 */
const TX_MS = Number(process.env.R61_TX_MS ?? 1000);
const KEPT = 120;
const LINES = Number(process.env.R61_LINES ?? 4000);

const switches = { poison: true };
const line = z.object({ sku: z.string(), qty: z.number().int(), price: z.number() });
const order = defineProcess({
  name: 'r61-order',
  states: ['Open', 'Done'],
  initial: 'Open',
  final: ['Done'],
  data: z.object({ lines: z.array(line), adjustments: z.number() }),
  initialData: () => ({
    lines: Array.from({ length: LINES }, (_, i) => ({ sku: `sku-${i}`, qty: 1 + (i % 5), price: 9.99 })),
    adjustments: 0,
  }),
  messages: {
    Begin: z.object({ key: z.string() }),
    Poison: z.object({ key: z.string() }),
    Adjust: z.object({ key: z.string() }),
  },
  correlate: (m) => m.payload.key,
  on: {
    Begin: [{ from: 'Open', to: 'Open' }],
    Poison: [
      {
        from: 'Open',
        to: 'Open',
        then: (d) => {
          if (switches.poison) throw new Error('r61: the handler cannot take this message');
          return { data: d };
        },
      },
    ],
    Adjust: [{ from: 'Open', to: 'Open', then: (d) => ({ data: { ...d, adjustments: d.adjustments + 1 } }) }],
  },
});

describe('review 61: releasing a large instance that kept many messages (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  /** The same deployment with a roomy limit, only to set the scene (the first deliveries of a large state are slow). */
  let setup: TestEngine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [],
      actions: [],
      processes: [order],
      config: { processes: { transaction_timeout_ms: TX_MS, quarantine_after_seconds: 1 } },
    });
    setup = await createTestEngine({
      db,
      clock: t.clock,
      flows: [],
      actions: [],
      processes: [order],
      config: { processes: { transaction_timeout_ms: 20_000, quarantine_after_seconds: 1 } },
    });
  });
  afterAll(async () => {
    await setup?.close();
    await t?.close();
    await db?.close();
  });

  it('a release of a quarantined order of a few thousand lines that kept many messages applies', async () => {
    const { engine } = t;
    const { clock } = t;
    const pm = setup.engine.processes;
    const key = `k-${randomUUID()}`;
    await pm.deliver(order, { id: randomUUID(), type: 'Begin', payload: { key } });
    const poison = { id: randomUUID(), type: 'Poison', payload: { key } };
    await expect(pm.deliver(order, poison)).rejects.toThrow(/cannot take this message/);
    clock.advance(1_500);
    const q = await pm.deliver(order, poison);
    expect(q.outcome).toBe('quarantined');
    const instanceId = q.instanceId!;
    for (let i = 0; i < KEPT; i++)
      expect((await pm.deliver(order, { id: randomUUID(), type: 'Adjust', payload: { key } })).outcome).toBe(
        'skipped_quarantined',
      );
    switches.poison = false;

    const inst = await db.prisma.sagaInstance.findUniqueOrThrow({ where: { id: instanceId } });
    const release = () =>
      engine.repairs.apply({
        kind: 'instance.release',
        target: { instanceId },
        expected: { state: inst.current_state, version: inst.version },
        mode: 'skip',
        actor: 'ana',
        reason: 'the poison message is understood; let the rest through',
        idempotencyKey: randomUUID(),
      });
    const tries: string[] = [];
    for (let i = 0; i < 2; i++) {
      const t0 = performance.now();
      tries.push(
        await release().then(
          () => `applied in ${Math.round(performance.now() - t0)} ms`,
          (e: unknown) =>
            `threw ${(e as { code?: string }).code ?? 'a plain error'} after ${Math.round(performance.now() - t0)} ms: ${String((e as Error).message).slice(0, 300)}`,
        ),
      );
      if (tries[i]!.startsWith('applied')) break;
    }
    const after = await db.prisma.sagaInstance.findUniqueOrThrow({ where: { id: instanceId } });
    expect(
      { status: after.status, adjustments: (after.state as { adjustments: number }).adjustments },
      `releases (allowed ${TX_MS + KEPT * 25} ms): ${JSON.stringify(tries, null, 1)}`,
    ).toEqual({ status: 'ACTIVE', adjustments: KEPT });
  }, 60_000);
});
