import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { parsePrometheus, seriesOf, type Exposition } from '../../support/parse-prometheus.ts';
import { eventually } from '../../support/seed-known-set.ts';
import { testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

const token = 'review35-scrape-token-abcdef0123';

async function scrapeText(plane: ControlPlane): Promise<string> {
  const res = await fetch(`${plane.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  expect(res.status, text.slice(0, 300)).toBe(200);
  return text;
}

/**
 * A stricter reading of the text format than the shared parser: every family has one HELP and one
 * TYPE before its samples and its samples are contiguous, no series repeats, every value is a number,
 * and a histogram's buckets are cumulative with +Inf equal to _count.
 */
function checkExposition(text: string): Exposition {
  const e = parsePrometheus(text);
  const lines = text.split('\n').filter((l) => l !== '');
  const helps = new Map<string, number>();
  const types = new Map<string, number>();
  const seenFamilies: string[] = [];
  const series = new Set<string>();
  const familyOf = (name: string) =>
    [...types.keys()].find((f) => name === f || /^(.*)_(bucket|sum|count)$/.exec(name)?.[1] === f) ?? name;
  for (const l of lines) {
    if (l.startsWith('# HELP ')) helps.set(l.split(' ')[2] ?? '', (helps.get(l.split(' ')[2] ?? '') ?? 0) + 1);
    else if (l.startsWith('# TYPE ')) types.set(l.split(' ')[2] ?? '', (types.get(l.split(' ')[2] ?? '') ?? 0) + 1);
    else {
      const name = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(l)?.[1] ?? '';
      const fam = familyOf(name);
      expect(types.has(fam), `sample ${name} has no TYPE line before it`).toBe(true);
      if (seenFamilies.at(-1) !== fam) {
        expect(seenFamilies, `family ${fam} is split`).not.toContain(fam);
        seenFamilies.push(fam);
      }
      const key = l.slice(0, l.lastIndexOf(' '));
      expect(series.has(key), `series repeated: ${key}`).toBe(false);
      series.add(key);
    }
  }
  for (const [f, n] of types) expect(n, `TYPE of ${f}`).toBe(1);
  for (const [f, n] of helps) expect(n, `HELP of ${f}`).toBe(1);
  // Sagaflow's own figures are never NaN. prom-client's default `nodejs_eventloop_lag_*` are NaN until
  // its event-loop histogram has a sample (seen in CI right after a start), which the format allows.
  for (const s of e.samples.filter((x) => x.name.startsWith('sagaflow_')))
    expect(Number.isNaN(s.value), `${s.name} is NaN`).toBe(false);
  const count = seriesOf(e, 'sagaflow_step_duration_seconds_count');
  for (const [key, total] of Object.entries(count)) {
    const [flow, action] = [/flow=([^,]*)/.exec(key)?.[1], /action=([^,]*)/.exec(key)?.[1]];
    const buckets = e.samples.filter(
      (s) => s.name === 'sagaflow_step_duration_seconds_bucket' && s.labels.flow === flow && s.labels.action === action,
    );
    for (let i = 1; i < buckets.length; i++)
      expect(buckets[i]?.value).toBeGreaterThanOrEqual(buckets[i - 1]?.value ?? 0);
    expect(buckets.at(-1)?.labels.le).toBe('+Inf');
    expect(buckets.at(-1)?.value).toBe(total);
  }
  return e;
}

const keyed = (rows: { k: string; count: number }[]) => Object.fromEntries(rows.map((r) => [r.k, r.count]));

describe('review 35: every /metrics figure equals the tables after a workload with failures and retries, across a restart', () => {
  let url: string;
  let plane: ControlPlane;
  let startedAt: Date;
  const env = () =>
    parseEnv({
      DATABASE_URL: url,
      CONTROL_PORT: '0',
      LOG_LEVEL: 'silent',
      SAGAFLOW_METRICS_TOKEN: token,
      SAGAFLOW_METRICS_RUN_COUNTS_MAX_AGE_MS: '0',
      SAGAFLOW_ENGINE_CONFIG: JSON.stringify({ retry: { base_delay_ms: 10, max_delay_ms: 20 } }),
    });
  beforeAll(async () => {
    url = await testDatabaseUrl('r35truth');
    startedAt = new Date();
    plane = await startControlPlane(env());
    const runs = await Promise.all(
      [0, 0, 0, 0, 1, 1, 1].map((failRate, i) =>
        plane.engine.startFlow('demo.order', { orderId: `r35-${i}`, amount: 5, failRate }),
      ),
    );
    await eventually('every run to finish', async () => {
      const open = await plane.db.prisma.flowRun.count({
        where: { id: { in: runs.map((r) => r.runId) }, status: { notIn: ['Completed', 'Failed'] } },
      });
      return open === 0 ? true : undefined;
    });
  });
  afterAll(async () => {
    await plane?.stop();
  });

  const truth = async () => {
    const q = plane.db.prisma;
    return {
      runs: keyed(
        await q.$queryRaw<{ k: string; count: number }[]>`
          select 'flow=' || flow_name || ',status=' || status as k, count(*)::int as count
            from "sagaflow"."flow_runs" group by 1`,
      ),
      outbox: keyed(
        await q.$queryRaw<{ k: string; count: number }[]>`
          select status as k, count(*)::int as count from "sagaflow"."outbox" group by 1`,
      ),
      steps: keyed(
        await q.$queryRawUnsafe<{ k: string; count: number }[]>(
          `select 'action=' || a.name || ',flow=' || r.flow_name as k, count(*)::int as count
             from "sagaflow"."action_runs" a join "sagaflow"."flow_runs" r on r.id = a.run_id
            where a.kind = 'action' and a.status in ('Completed', 'Errored') and a.updated_at > $1::timestamptz
            group by 1`,
          startedAt,
        ),
      ),
    };
  };

  it('runs by status, outbox pending and dead, and the step histogram equal the tables; the text is well formed', async () => {
    const t = await truth();
    expect(Object.values(t.runs).reduce((a, b) => a + b, 0)).toBe(7);
    const e = checkExposition(await scrapeText(plane));
    expect(seriesOf(e, 'sagaflow_runs')).toEqual(t.runs);
    expect(seriesOf(e, 'sagaflow_outbox_pending')).toEqual({ '': t.outbox.Pending ?? 0 });
    expect(seriesOf(e, 'sagaflow_outbox_dead')).toEqual({ '': t.outbox.Dead ?? 0 });
    expect(seriesOf(e, 'sagaflow_stuck_runs')).toEqual({});
    // The histogram counts a step once its window settled (5 s): poll scrapes until it has all of them.
    const steps = await eventually('the finished steps to be counted', async () => {
      const x = seriesOf(checkExposition(await scrapeText(plane)), 'sagaflow_step_duration_seconds_count');
      const total = Object.values(x).reduce((a, b) => a + b, 0);
      return total >= Object.values(t.steps).reduce((a, b) => a + b, 0) ? x : undefined;
    });
    expect(steps).toEqual(t.steps);
  });

  it('no label carries a run id, an order id (input), a business key or an error message', async () => {
    const ids = (await plane.db.prisma.flowRun.findMany({ select: { id: true } })).map((r) => r.id);
    expect(ids.length).toBeGreaterThan(0);
    const e = parsePrometheus(await scrapeText(plane));
    const values = new Set(e.samples.flatMap((x) => Object.values(x.labels)));
    for (const v of values) {
      expect(
        ids.some((id) => v.includes(id)),
        v,
      ).toBe(false);
      expect(v).not.toMatch(/r35-|warehouse timed out/);
    }
  });

  it('twelve concurrent scrapes all answer 200 with the same run figures and well-formed text', async () => {
    const texts = await Promise.all(Array.from({ length: 12 }, () => scrapeText(plane)));
    const runs = texts.map((t) => JSON.stringify(seriesOf(checkExposition(t), 'sagaflow_runs')));
    expect(new Set(runs).size).toBe(1);
  });

  it('counters read after a restart of the control plane are never below the ones read before it', async () => {
    const before = parsePrometheus(await scrapeText(plane));
    await plane.stop();
    plane = await startControlPlane(env());
    const after = parsePrometheus(await scrapeText(plane));
    for (const name of ['sagaflow_anomalies_total', 'sagaflow_process_transitions_total', 'sagaflow_repairs_total']) {
      const b = seriesOf(before, name);
      const a = seriesOf(after, name);
      for (const [k, v] of Object.entries(b)) expect(a[k] ?? 0, `${name}{${k}}`).toBeGreaterThanOrEqual(v);
    }
  });
});
