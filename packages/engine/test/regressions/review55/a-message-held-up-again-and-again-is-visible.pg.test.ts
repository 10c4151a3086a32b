import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTallyEngines, type TallyEngines } from '../review54/support/tally-engines.ts';
import { tallyProcess } from '../review54/support/tally-process.ts';

/**
 * Review 55 (ADR 0131 §4). A delivery that gives up on a row another session holds (55P03) writes
 * nothing, records no failure and only logs a warning; the caller (a broker) delivers it again. While
 * the session keeps the row (an abandoned host transaction left idle in transaction), every delivery to
 * that instance is refused that way, for ever. A due timeout of the same instance, refused the same
 * way, becomes the instance's `failingTimeout` and journals `process_timeout_failing` (ADR 0127): on-call
 * sees it. The messages do not show anywhere on-call looks (the instance, the anomaly journal): the
 * instance reads ACTIVE and healthy while nothing sent to it lands. Expected (ARCHITECTURE: usable at
 * 3 a.m., no dead ends; seed 004: "who can see ... a process that stopped progressing?"): after repeated
 * refusals the instance, or the anomaly journal, names the instance and why its messages do not land.
 */
const TX_MS = 1_000;

describe('review 55: messages to an instance another session keeps (real PostgreSQL)', () => {
  let t: TallyEngines;
  beforeAll(async () => {
    t = await openTallyEngines({ txMs: TX_MS, noStoreRetry: true });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('an instance whose messages are refused again and again as held up says so where on-call looks', async () => {
    const [engine, admin] = [t.engines[0]!, t.admin];
    const { key, instance: inst } = await t.begin();
    await t.holdInstances([inst.id]);

    // A broker delivering one message again and again, as ADR 0131 §4 tells it to.
    const id = randomUUID();
    const answers: string[] = [];
    for (let i = 0; i < 5; i++)
      answers.push(
        await engine.processes.deliver(tallyProcess, { id, type: 'Add', payload: { key, n: 1 } }).then(
          (r) => `answered ${r.outcome}`,
          (e: unknown) => `threw ${(e as { code?: string }).code ?? (e as Error).name}`,
        ),
      );
    expect(
      answers.every((a) => a.startsWith('threw')),
      answers.join('; '),
    ).toBe(true);

    const view = await engine.processes.find(inst.id);
    const anomalies = await admin.pool!.query<{ code: string; message: string }>(
      `select code, message from "sagaflow"."anomaly_log" where details::text like $1 or message like $1`,
      [`%${inst.id}%`],
    );
    const said = {
      status: view?.status,
      failure: (view as { failure?: unknown } | null)?.failure ?? null,
      anomalies: anomalies.rows.map((r) => r.code),
    };
    expect(
      said.failure !== null || said.anomalies.length > 0,
      `five deliveries of message ${id} were refused as held up; what on-call can see: ${JSON.stringify(said)}`,
    ).toBe(true);
    // ADR 0132: one journal entry for the five refusals (one per instance per minute), naming the
    // instance and the message, and saying what to do.
    expect(said.anomalies).toEqual(['process_delivery_held_up']);
    const [entry] = (
      await admin.pool!.query<{ message: string; details: { instanceId: string; messageId: string } }>(
        `select message, details from "sagaflow"."anomaly_log" where code = 'process_delivery_held_up' and row_id = $1`,
        [inst.id],
      )
    ).rows;
    expect(entry?.details).toMatchObject({ instanceId: inst.id, messageId: id });
    expect(entry?.message).toMatch(/not landing.*idle in transaction/);
  }, 60_000);
});
