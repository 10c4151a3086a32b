import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../src/db/database.ts';
import { defineProcess, parseEngineConfig } from '../../src/index.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { newMessageId, newOrderId, processManagerOn } from './support/process-harness.ts';

/**
 * ADR 0127: a timeout whose delivery keeps throwing backs off, shows on its instance as
 * `failingTimeout` (beside seed 002's failure record, which stays null), journals one
 * `process_timeout_failing` anomaly when it starts failing, and clears once it is delivered.
 */
let broken = true;
const boom = 'failing-timeout test: the ledger refused';
let made = 0;
const desk = () =>
  defineProcess({
    name: `failing-timeout-${++made}`,
    states: ['Open', 'Waiting', 'Late'],
    initial: 'Open',
    final: ['Late'],
    data: z.object({ key: z.string() }),
    initialData: (key) => ({ key }),
    messages: { Start: z.object({ key: z.string() }) },
    correlate: (m) => m.payload.key,
    timeouts: { late: { afterMs: 1000, expects: 'Waiting' }, later: { afterMs: 36_000_000, expects: 'Waiting' } },
    on: {
      Start: [{ from: 'Open', to: 'Waiting', schedule: ['late', 'later'] }],
      late: [
        {
          from: 'Waiting',
          to: 'Waiting',
          then: () => {
            if (broken) throw new Error(boom);
            return {};
          },
        },
      ],
      later: [{ from: 'Waiting', to: 'Late' }],
    },
  });

describe(`a failing process timeout (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('journals one anomaly when it starts failing, shows on the instance, and clears once delivered', async () => {
    broken = true;
    const d = desk();
    const h = processManagerOn(db, { processes: [d] });
    const id = (await h.pm.deliver(d, { id: newMessageId('s'), type: 'Start', payload: { key: newOrderId() } }))
      .instanceId!;
    h.clock.advance(1000);
    const firstFailure = h.clock.now();
    for (let i = 0; i < 4; i++) {
      expect(await h.pm.sweepProcessTimeouts()).toMatchObject({ failed: 1 });
      const t = await db.prisma.processTimeout.findFirstOrThrow({ where: { instance_id: id, name: 'late' } });
      h.clock.advance(t.retry_at!.getTime() - h.clock.now().getTime());
    }
    const found = await h.pm.find(id);
    expect(found?.failure, 'the failure record stays about messages (seed 002)').toBeNull();
    expect(found?.failingTimeout).toMatchObject({ name: 'late', attempts: 4, lastError: boom, failingTimeouts: 1 });
    expect(found?.failingTimeout?.firstFailedAt?.getTime()).toBe(firstFailure.getTime());
    // 30 + 60 + 120 s after the first failure, the fourth chose 240 s.
    expect(found?.failingTimeout?.nextRetryAt?.getTime()).toBe(firstFailure.getTime() + (30 + 60 + 120 + 240) * 1000);
    const listed = await h.pm.findByStatus('ACTIVE', new Date(h.clock.now().getTime() + 1), 10_000, {
      processName: d.name,
    });
    expect(listed.find((i) => i.id === id)?.failingTimeout).toMatchObject({ name: 'late', attempts: 4 });

    const journaled = await db.prisma.anomalyLog.findMany({
      where: { code: 'process_timeout_failing', details: { path: ['instanceId'], equals: id } },
    });
    expect(journaled, 'one entry when it starts failing, none per attempt').toHaveLength(1);
    expect(journaled[0]).toMatchObject({ name: 'late', details: { timeout: 'late', attempts: 1, error: boom } });
    expect(journaled[0]?.message).toContain(boom);

    broken = false;
    // `later` (armed beside it, not failing, not due) is no failing timeout.
    expect(await h.pm.sweepProcessTimeouts()).toMatchObject({ delivered: 1, failed: 0 });
    const after = await h.pm.find(id);
    expect(after?.failingTimeout, 'a delivered timeout is not failing').toBeNull();
    expect(
      await db.prisma.anomalyLog.count({
        where: { code: 'process_timeout_failing', details: { path: ['instanceId'], equals: id } },
      }),
    ).toBe(1);
  });

  it('refuses a timeout_retry_max_seconds below timeout_retry_seconds, or not a whole positive number, naming the key', () => {
    expect(() =>
      parseEngineConfig({ processes: { timeout_retry_seconds: 60, timeout_retry_max_seconds: 30 } }),
    ).toThrow(/processes\.timeout_retry_max_seconds/);
    expect(() => parseEngineConfig({ processes: { timeout_retry_max_seconds: 0 } })).toThrow(
      /processes\.timeout_retry_max_seconds/,
    );
    expect(() => parseEngineConfig({ processes: { timeout_retry_max_seconds: 1.5 } })).toThrow(
      /processes\.timeout_retry_max_seconds/,
    );
    expect(parseEngineConfig({}).processes.timeout_retry_max_seconds).toBe(3600);
  });
});
