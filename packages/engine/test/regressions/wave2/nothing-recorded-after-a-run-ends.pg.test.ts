import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../../src/create-engine.ts';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, EngineError, type ActionDefinition, type Json } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Issue 13 item 3: three engines over one PostgreSQL work 150 runs while the test terminates,
 * cancels and signals them at moments tied to each run's progress. Commit order is read from the
 * database itself: deferred constraint triggers (installed by this test only) take a number from a
 * sequence at each transaction's commit, for every history row, step claim, step outcome and signal
 * row. Nothing of a run may commit after its terminal event; a signal sent once terminate returned
 * is refused as run_not_open; no action starts once terminate returned.
 */

const RUNS = 150;
const STEPS = 6;

/** One order for everything the test process observes (action starts, API returns). */
let tick = 0;
const started: { key: string; n: number; order: number }[] = [];
const triggers = new Map<string, (n: number) => void>();

const work = defineAction({
  name: 'race-work',
  run: async (i: { key: string; n: number }) => {
    started.push({ key: i.key, n: i.n, order: ++tick });
    triggers.get(i.key)?.(i.n);
    await sleep(1 + Math.floor(Math.random() * 6));
    return i.n;
  },
});

const flow = defineFlow({
  name: 'race-terminal',
  version: 1,
  run: async (ctx, key: string) => {
    for (let n = 0; n < 3; n++) await ctx.action(work, { key, n }).run();
    const go = await ctx.awaitSignal<Json>('go', { timeoutSeconds: 600 });
    for (let n = 3; n < STEPS; n++) await ctx.action(work, { key, n }).run();
    return go;
  },
});

const commitOrderSql = `
  create sequence public.commit_order;
  create table public.commit_log (seq bigint not null, run_id uuid not null, what text not null);
  create function public.log_commit() returns trigger language plpgsql as $$
  declare
    n jsonb := to_jsonb(new);
  begin
    if tg_op = 'UPDATE' and n->'attempts' = to_jsonb(old)->'attempts' and n->'status' = to_jsonb(old)->'status' then
      return null;
    end if;
    insert into public.commit_log values (
      nextval('public.commit_order'), new.run_id,
      case tg_table_name
        when 'flow_events' then 'event ' || (n->>'type')
        when 'action_runs' then 'step ' || (n->>'sequence') || ' ' || lower(tg_op) || ' ' || (n->>'status') || ' attempt ' || (n->>'attempts')
        else 'signal ' || (n->>'name') end);
    return null;
  end $$;
  create constraint trigger log_event after insert on "sagaflow"."flow_events"
    deferrable initially deferred for each row execute function public.log_commit();
  create constraint trigger log_step after insert or update on "sagaflow"."action_runs"
    deferrable initially deferred for each row execute function public.log_commit();
  create constraint trigger log_signal after insert on "sagaflow"."signals"
    deferrable initially deferred for each row execute function public.log_commit();
`;

describe('terminate, cancel and signal racing three engines (real PostgreSQL)', () => {
  let first: Database & { url?: string };
  const dbs: Database[] = [];
  const engines: Engine[] = [];

  beforeAll(async () => {
    first = await openTestDatabase({ poolSize: 8 });
    await first.driver.exec(commitOrderSql);
    dbs.push(first);
    for (let i = 1; i < 3; i++) dbs.push(await createDatabase({ kind: 'postgres', url: first.url ?? '', poolSize: 8 }));
    for (const db of dbs) {
      engines.push(
        createEngine({
          db,
          flows: [flow],
          actions: [work] as ActionDefinition<never, Json>[],
          logger: pino({ level: 'silent' }),
          config: { worker: { poll_interval_ms: 10, concurrency: 6 }, logging: { anomaly_level: null } },
        }),
      );
    }
  });
  afterAll(async () => {
    for (const e of engines) await e.stopWorkers(2000);
    for (const db of dbs.slice(1)) await db.close();
    await first.close();
  });

  it('once a run ends nothing of it commits, no action starts after terminate returned, and a late signal is run_not_open', async () => {
    const pick = () => engines[Math.floor(Math.random() * engines.length)] as Engine;
    const runIds = new Map<string, string>();
    const terminatedAt = new Map<string, number>();
    const signals: { key: string; sentAt: number; outcome: string }[] = [];
    const ops: Promise<void>[] = [];

    const terminate = async (key: string) => {
      const { terminated } = await pick().terminate(runIds.get(key) ?? '', { reason: 'race' });
      if (terminated) terminatedAt.set(key, ++tick);
    };
    const cancel = async (key: string) => {
      await pick().cancel(runIds.get(key) ?? '', { reason: 'race', cleanupSeconds: 30 });
    };

    for (let r = 0; r < RUNS; r++) {
      const key = `k${r}`;
      const plan = r % 6; // 0-2 terminate, 3 cancel, 4 cancel then terminate, 5 left alone
      const at = Math.floor(Math.random() * STEPS);
      const delay = Math.floor(Math.random() * 10);
      if (plan < 5) {
        let fired = false;
        triggers.set(key, (n) => {
          if (fired || n !== at) return;
          fired = true;
          ops.push(
            (async () => {
              await sleep(delay);
              if (plan === 3 || plan === 4) await cancel(key);
              if (plan !== 3) await terminate(key);
            })(),
          );
        });
      }
      const { runId } = await pick().startFlow(flow, key);
      runIds.set(key, runId);
    }
    for (const e of engines) e.startWorkers();

    // Signals at random runs all along, from several callers at once.
    let signalling = true;
    const keys = [...runIds.keys()];
    const signaller = async () => {
      while (signalling) {
        const key = keys[Math.floor(Math.random() * keys.length)] ?? 'k0';
        const sentAt = ++tick;
        try {
          await pick().signal(runIds.get(key) ?? '', 'go', { from: sentAt });
          signals.push({ key, sentAt, outcome: 'accepted' });
        } catch (err) {
          signals.push({ key, sentAt, outcome: err instanceof EngineError ? err.code : String(err) });
        }
        await sleep(Math.floor(Math.random() * 4));
      }
    };
    const signallers = Array.from({ length: 6 }, () => signaller());

    const ids = [...runIds.values()];
    await waitFor(
      'every run to finish',
      async () => {
        const open = await first.prisma.flowRun.count({ where: { id: { in: ids }, finished_at: null } });
        return open === 0 ? true : undefined;
      },
      600_000,
    );
    signalling = false;
    await Promise.all(signallers);
    await Promise.all(ops);

    // 1. Commit order from the database: nothing of a run commits after its terminal event.
    const late = await first.driver.query<{ run_id: string; what: string; terminal: string }>(`
      with terminal as (
        select l.run_id, min(l.seq) as seq, min(l.what) as what from public.commit_log l
         where l.what in ('event run.completed', 'event run.failed', 'event run.compensated', 'event run.expired',
                          'event run.cancelled', 'event run.terminated', 'event run.timedout')
         group by l.run_id)
      select l.run_id::text as run_id, l.what, t.what as terminal
        from public.commit_log l join terminal t on t.run_id = l.run_id and l.seq > t.seq
       order by l.seq`);
    const statuses = await first.prisma.flowRun.groupBy({ by: ['status'], _count: true });
    expect(terminatedAt.size, JSON.stringify(statuses)).toBeGreaterThan(RUNS / 4);
    expect.soft(late).toEqual([]);

    // 2. A signal sent after terminate returned is refused as run_not_open, never accepted.
    const afterTerminate = signals.filter((s) => s.sentAt > (terminatedAt.get(s.key) ?? Infinity));
    expect(afterTerminate.length).toBeGreaterThan(0);
    expect.soft(afterTerminate.filter((s) => s.outcome !== 'run_not_open')).toEqual([]);
    for (const key of keys.slice(0, 20)) {
      await expect(pick().signal(runIds.get(key) ?? '', 'go')).rejects.toMatchObject({ code: 'run_not_open' });
    }

    // 3. No action started after terminate returned.
    expect.soft(started.filter((s) => s.order > (terminatedAt.get(s.key) ?? Infinity))).toEqual([]);
  }, 900_000); // 150 runs on three engines: slow on a loaded machine, bounded by the wait above
});
