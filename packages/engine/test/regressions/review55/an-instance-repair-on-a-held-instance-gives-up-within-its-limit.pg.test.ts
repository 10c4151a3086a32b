import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTallyEngines, type TallyEngines } from '../review54/support/tally-engines.ts';
import { tallyProcess } from '../review54/support/tally-process.ts';

/**
 * Review 55 (ADR 0131 §3). Review 54 found that a delivery to an instance another session holds FOR
 * UPDATE hung for as long as the row was held, past `processes.transaction_timeout_ms` (Prisma's
 * timeout does not cancel a statement waiting on a lock). ADR 0131 put `statement_timeout` and
 * `lock_timeout` into "a process transaction ... delivery, release and operator command". The
 * operator's repairs on an instance (`instance.force_transition`, `instance.command`,
 * `instance.release` through `engine.repairs.apply`, which is what the control plane and the CLI call)
 * run in apply-repair's own transaction, with the same `transactionTimeoutMs` given to Prisma but
 * nothing given to the database. The guarantee is the one ADR 0131 states for the other entries: the
 * call settles within its limit (and a bound for a loaded machine), whatever another session holds.
 */
const TX_MS = 1_000;
const BOUND_MS = TX_MS + 5_000;

async function within(p: Promise<unknown>, ms: number) {
  const t0 = Date.now();
  const r = await Promise.race([
    p.then(
      (x) => `answered ${(x as { status?: string; outcome?: string }).status ?? (x as { outcome?: string }).outcome}`,
      (e: unknown) => `threw ${(e as { code?: string }).code ?? String((e as Error).message).slice(0, 80)}`,
    ),
    new Promise<string>((res) => setTimeout(() => res('not within the bound'), ms)),
  ]);
  return { settled: r, afterMs: Date.now() - t0 };
}

describe('review 55: an operator repair on an instance another session holds (real PostgreSQL)', () => {
  let t: TallyEngines;
  const pending: Promise<unknown>[] = [];
  beforeAll(async () => {
    t = await openTallyEngines({ txMs: TX_MS });
  });
  afterAll(async () => {
    await Promise.allSettled(pending);
    await t?.close();
  });

  it('a force-transition of a held instance settles within its transaction limit, as a delivery to it does', async () => {
    const [engine, db, admin] = [t.engines[0]!, t.dbs[0]!, t.admin];
    const { key, instance: inst } = await t.begin();
    const holder = await t.holdInstances([inst.id]);

    // The control: a delivery to it gives up within its limit (ADR 0131 §3, §4).
    const delivery = engine.processes.deliver(tallyProcess, {
      id: randomUUID(),
      type: 'Add',
      payload: { key, n: 1 },
    });
    pending.push(delivery.catch(() => undefined));
    const deliverySettled = await within(delivery, BOUND_MS);

    const repair = engine.repairs.apply({
      kind: 'instance.force_transition',
      target: { instanceId: inst.id },
      expected: { state: 'Open', version: inst.version },
      to: 'Done',
      actor: 'ana',
      reason: 'closing a stuck tally',
      idempotencyKey: randomUUID(),
    });
    pending.push(repair.catch(() => undefined));
    const repairSettled = await within(repair, BOUND_MS);
    // What it is doing meanwhile (read from pg_stat_activity): waiting on the instance's row lock.
    const waiting = await admin.pool!.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query ilike '%saga_instances%'`,
    );
    const settled = (x: { settled: string }) => (x.settled === 'not within the bound' ? 'hung' : 'settled');
    expect(
      { delivery: settled(deliverySettled), repair: settled(repairSettled) },
      `the repair ${repairSettled.settled} after ${repairSettled.afterMs} ms (limit ${TX_MS} ms); ${waiting.rows[0]?.n} statement(s) still wait on the instance's row lock`,
    ).toEqual({ delivery: 'settled', repair: 'settled' });
    // It says why, and changed nothing: the instance is as it was, and no audit row was written.
    expect(repairSettled.settled).toBe('threw target_busy');
    await expect(repair).rejects.toThrow(/another session held a row it needed.*nothing changed/);
    const after = await db.prisma.sagaInstance.findUniqueOrThrow({ where: { id: inst.id } });
    expect({ state: after.state, version: after.version }).toEqual({ state: inst.state, version: inst.version });
    expect(await db.prisma.repairCommand.count({ where: { target_id: inst.id } })).toBe(0);

    // Once the row is let go, the repair goes through (or said why it did not).
    await holder.rollback();
    // Sent again once the row is let go, the same command goes through.
    const again = await engine.repairs.apply({
      kind: 'instance.force_transition',
      target: { instanceId: inst.id },
      expected: { state: 'Open', version: inst.version },
      to: 'Done',
      actor: 'ana',
      reason: 'closing a stuck tally',
      idempotencyKey: randomUUID(),
    });
    expect(again.status).toBe('applied');
  }, 60_000);
});
