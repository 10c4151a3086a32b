import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/index.ts';
import { openTallyEngines, type TallyEngines } from '../review54/support/tally-engines.ts';
import { tallyProcess } from '../review54/support/tally-process.ts';

/**
 * Review 56 (ADR 0132 §3). A delivery that gives up on a row another session holds journals
 * `process_delivery_held_up`, so an instance whose messages keep bouncing shows where on-call looks.
 * The journal entry is written by `insert … select … from saga_instances where correlation_key = …`:
 * it needs the instance row to be visible. The first message to a new key is held up the same way
 * when another session has created that key's instance and not committed (a host's
 * `deliver(…, { tx })` whose transaction stays open): the engine's insert waits on the unique index
 * past `lock_timeout`. That instance is not visible to the journal's read, so nothing is written:
 * every delivery to the key is refused, and nothing on-call looks at names it.
 */
const TX_MS = 1_000;

describe('review 56: the first messages to a key another session is creating (real PostgreSQL)', () => {
  let t: TallyEngines;
  let engine: Engine;
  let host: pg.Client;
  beforeAll(async () => {
    t = await openTallyEngines({ txMs: TX_MS, noStoreRetry: true });
    engine = t.engines[0]!;
    host = new pg.Client({ connectionString: t.admin.url });
    await host.connect();
  });
  afterAll(async () => {
    await host?.query('rollback').catch(() => undefined);
    await host?.end();
    await t?.close();
  });

  it('messages refused because another session holds a new key still journal process_delivery_held_up', async () => {
    const key = `k-${randomUUID()}`;
    // A host delivers the key's first message in its own transaction and keeps the transaction open.
    await host.query('begin');
    const first = await engine.processes.deliver(
      tallyProcess,
      { id: randomUUID(), type: 'Begin', payload: { key } },
      { tx: host },
    );
    expect(first.outcome).toBe('applied');

    // A broker delivers another message to the same key, again and again, as ADR 0131 §4 tells it to.
    const id = randomUUID();
    const answers: string[] = [];
    for (let i = 0; i < 3; i++)
      answers.push(
        await engine.processes.deliver(tallyProcess, { id, type: 'Add', payload: { key, n: 1 } }).then(
          (r) => `answered ${r.outcome}`,
          (e: unknown) =>
            `threw ${(e as { code?: string }).code ?? (e as Error).name}: ${(e as Error).message.replace(/\s+/g, ' ').slice(0, 200)}`,
        ),
      );
    expect(
      answers.every((a) => a.startsWith('threw')),
      answers.join('; '),
    ).toBe(true);

    const anomalies = await t.admin.pool!.query<{ code: string; details: unknown }>(
      `select code, details from "sagaflow"."anomaly_log" where code = 'process_delivery_held_up'`,
    );
    expect(
      anomalies.rows.map((r) => r.code),
      `three deliveries of message ${id} to key ${key} were refused as held up (${answers.join('; ')}); ` +
        `the journal holds: ${JSON.stringify(anomalies.rows)}`,
    ).toEqual(['process_delivery_held_up']);
  }, 60_000);
});
