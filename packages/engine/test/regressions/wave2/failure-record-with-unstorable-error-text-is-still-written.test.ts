import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/process/define-process.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { processManagerOn } from '../../process/support/process-harness.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/** An error whose name and message hold a lone surrogate and a NUL, as a misbehaving library may throw. */
class GarbledError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Garbled\ud800Error';
  }
}

/**
 * Issue 13, item 6: "its failure record cannot be stored, and after the budget the instance is
 * still ACTIVE with no failure: it fails forever and nothing shows it". The failure record holds
 * our own diagnostic text (the error's type and message, cut at 1,000 characters, which can itself
 * split a surrogate pair); the quarantine history row keeps the type in jsonb, which refuses a lone
 * surrogate. That text is made storable (U+FFFD), so the record and the quarantine are written.
 */
describe(`a failure whose error text holds a lone surrogate or NUL is still recorded and quarantined (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const lamp = defineProcess({
    name: 'wave2.lamp',
    states: ['Off', 'On'] as const,
    initial: 'Off' as const,
    final: [] as const,
    data: z.object({ flips: z.number() }),
    initialData: () => ({ flips: 0 }),
    messages: { Flip: z.object({ lamp: z.string() }) },
    correlate: (m: { payload: { lamp: string } }) => m.payload.lamp,
    on: {
      Flip: [
        {
          from: 'Off',
          to: 'On',
          then: () => {
            // 999 characters, then a surrogate pair: the 1,000-character cut keeps only its first half.
            throw new GarbledError(`${'x'.repeat(990)} NUL\u0000 abc😀 and more`);
          },
        },
      ],
    },
  });

  it('the first failure is recorded and the one past the budget quarantines the instance', async () => {
    const clock = new TestClock(new Date('2026-03-01T10:00:00.000Z'));
    const { pm } = processManagerOn(db, {
      processes: [lamp],
      clock,
      config: { quarantine_after_seconds: 60, store_retry: { max_attempts: 1 } },
    });
    const message = { id: 'flip-1', type: 'Flip', payload: { lamp: 'l-1' } };
    await expect(pm.deliver('wave2.lamp', message)).rejects.toBeInstanceOf(GarbledError);
    clock.advance(61_000);
    const second = await pm.deliver('wave2.lamp', message).then(
      (r) => r.outcome,
      (e: unknown) => `threw ${(e as Error).name}`,
    );
    expect(second).toBe('quarantined');
    const row = await db.prisma.sagaInstance.findFirstOrThrow({ where: { process_name: 'wave2.lamp' } });
    expect(row.status).toBe('QUARANTINED');
    expect(row.failure_error_type).toBe('Garbled\ufffdError');
    expect(row.failure_message).toHaveLength(1000);
    expect(row.failure_message?.endsWith(' NUL\ufffd abc\ufffd')).toBe(true);
    const history = await db.prisma.processTransition.findMany({ where: { instance_id: row.id } });
    expect(history.map((h) => h.outcome)).toContain('quarantined');
  });
});
