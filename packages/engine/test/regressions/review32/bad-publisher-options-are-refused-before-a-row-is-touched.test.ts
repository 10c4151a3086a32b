import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { EngineError } from '../../../src/errors/engine-error.ts';
import { inProcessTransport } from '../../../src/outbox/in-process-transport.ts';
import type { OutboxTransport } from '../../../src/outbox/outbox-transport.ts';
import { publishOutboxBatch } from '../../../src/outbox/publish-outbox-batch.ts';
import { startOutboxPublisher } from '../../../src/outbox/start-outbox-publisher.ts';
import { webhookTransport } from '../../../src/outbox/webhook-transport.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { clearOutbox, outboxRow, seedOutbox } from '../../outbox/seed-outbox.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

const logger = pino({ level: 'silent' });

/** What a call threw, or 'returned' when it did not. */
async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
    return 'returned';
  } catch (err) {
    return err;
  }
}

const refusal = (field: string): unknown =>
  expect.objectContaining({
    code: expect.stringMatching(/^(invalid_input|config_invalid)$/) as unknown,
    message: expect.stringContaining(field) as unknown,
  }) as unknown;

describe(`review 32: bad publisher and transport options (${testDbKind()})`, () => {
  let db: Database;
  let clock: TestClock;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });
  beforeEach(async () => {
    await clearOutbox(db);
    clock = new TestClock(new Date(Date.now() + 1000));
  });

  it.each([
    ['routes: null', null, 'routes'],
    ['a route that is not a transport', { inventory: {} }, 'inventory'],
    ['a route whose publish is a string', { inventory: { kind: 'x', publish: 'nope' } }, 'inventory'],
  ])('%s is refused naming the field, and the due row keeps its attempts', async (_what, routes, field) => {
    const [id] = await seedOutbox(db, [{}]);

    const err = await thrown(() =>
      publishOutboxBatch({ db, routes: routes as unknown as Record<string, OutboxTransport>, clock, logger }),
    );

    const row = await outboxRow(db, id!);
    expect({ err, attempts: row.attempts, lastError: row.last_error }).toEqual({
      err: refusal(field),
      attempts: 0,
      lastError: null,
    });
  });

  it('startOutboxPublisher with routes: undefined is refused at start, not by burning rows to Dead', async () => {
    const [id] = await seedOutbox(db, [{}]);
    const err = await thrown(() => {
      const publisher = startOutboxPublisher({
        db,
        routes: undefined as unknown as Record<string, OutboxTransport>,
        clock,
        logger,
        config: { poll_interval_ms: 10, max_attempts: 1 },
      });
      return publisher.stop();
    });
    const row = await outboxRow(db, id!);
    expect({ err, status: row.status, attempts: row.attempts }).toEqual({
      err: refusal('routes'),
      status: 'Pending',
      attempts: 0,
    });
  });

  it.each([
    ['a url that is not one', { url: 'not a url', secret: 's' }, 'url'],
    ['a negative timeout', { url: 'http://127.0.0.1:9/hook', secret: 's', timeoutMs: -1 }, 'timeoutMs'],
    ['a NaN timeout', { url: 'http://127.0.0.1:9/hook', secret: 's', timeoutMs: Number.NaN }, 'timeoutMs'],
    ['an empty secret', { url: 'http://127.0.0.1:9/hook', secret: '' }, 'secret'],
  ])('webhookTransport with %s is refused when built, naming the field', async (_what, options, field) => {
    expect(await thrown(() => webhookTransport(options))).toEqual(refusal(field));
  });

  it('backoff delays past the range of a date: refused by the config, or the failure is still recorded and the row goes Dead', async () => {
    const [id] = await seedOutbox(db, [{}]);
    const failing = inProcessTransport(() => {
      throw new Error('downstream is down');
    });
    const huge = Number.MAX_SAFE_INTEGER;
    const err = await thrown(() =>
      publishOutboxBatch({
        db,
        routes: { inventory: failing },
        clock,
        logger,
        config: { max_attempts: 1, backoff: { base_delay_ms: huge, max_delay_ms: huge } },
      }),
    );
    const row = await outboxRow(db, id!);
    if (err instanceof EngineError) {
      expect(err).toEqual(refusal('backoff'));
      expect(row.attempts).toBe(0);
    } else {
      // Accepted: then the failure must be recorded like any other (ADR 0009: last_error, then Dead).
      expect({ status: row.status, lastError: row.last_error }).toEqual({
        status: 'Dead',
        lastError: 'downstream is down',
      });
    }
  });

  it('a retry far in the future with a large but valid max delay is recorded (held)', async () => {
    const [id] = await seedOutbox(db, [{}]);
    const failing = inProcessTransport(() => {
      throw new Error('downstream is down');
    });
    const year = 365 * 86_400_000;
    await publishOutboxBatch({
      db,
      routes: { inventory: failing },
      clock,
      logger,
      config: { max_attempts: 1000, backoff: { base_delay_ms: year, max_delay_ms: 10 * year } },
    });
    const row = await outboxRow(db, id!);
    expect({ status: row.status, attempts: row.attempts, lastError: row.last_error }).toEqual({
      status: 'Pending',
      attempts: 1,
      lastError: 'downstream is down',
    });
    expect(row.available_at.getTime()).toBe(clock.now().getTime() + year);
  });
});
