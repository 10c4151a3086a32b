import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseEnv, startControlPlane } from '@sagaflow/control';
import { signInConsole } from './scale/console-http.ts';

// `pnpm --filter @sagaflow/bench run bench:run-page [-- --steps 1000]` (ADR 0035): how many bytes a
// run page moves for a long run. A real `demo.pick-list` run of 20 lines, its steps and events
// copied (same shapes, new sequences) up to `--steps`, on an embedded control plane; then the
// answers' sizes as JSON: the whole detail (the engine's `getRun`, what `runs.get` used to answer
// every second) and, over HTTP, the head (`runs.get`), a poll with nothing new and one with a step more.
// A measurement, not a test: bytes, not timings, so a loaded machine gives the same figures.

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: { steps: { type: 'string', default: '1000' } },
});
const steps = Number(values.steps);
if (!Number.isSafeInteger(steps) || steps < 20 || steps % 20 !== 0)
  throw new Error('--steps must be a whole multiple of 20');

const dir = mkdtempSync(join(tmpdir(), 'sagaflow-run-page-'));
const password = 'run page bench password';
const plane = await startControlPlane(
  parseEnv({
    SAGAFLOW_DATA_DIR: join(dir, 'pglite'),
    CONTROL_PORT: '0',
    LOG_LEVEL: 'silent',
    SAGAFLOW_DEMO: '0',
    SAGAFLOW_ADMIN_PASSWORD: password,
  }),
);
try {
  const { runId } = await plane.engine.startFlow('demo.pick-list', { orderId: 'bench-order-0001', lines: 20 });
  for (let i = 0; (await plane.engine.getRun(runId))?.run.status !== 'Completed'; i++) {
    if (i > 600) throw new Error('the pick list did not complete in 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  const sql = plane.db.driver;
  // Copies of the 20 real steps and their events, shifted by 20 each time: the shapes a long run has.
  await sql.query(
    `with copies as (select k from generate_series(1, $2::int / 20 - 1) k),
          s as (insert into "sagaflow"."action_runs" (run_id, sequence, kind, name, status, input, output, attempts,
                                                      max_attempts, started_at, finished_at)
                select a.run_id, a.sequence + 20 * k, a.kind, a.name, a.status, a.input, a.output, a.attempts,
                       a.max_attempts, a.started_at, a.finished_at
                  from "sagaflow"."action_runs" a, copies where a.run_id = $1::uuid
                returning id, run_id, sequence)
     insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data, at)
     select e.run_id, e.type, s.sequence, s.id, e.data, e.at
       from s join "sagaflow"."flow_events" e on e.run_id = s.run_id and e.sequence = ((s.sequence - 1) % 20) + 1`,
    [runId, steps],
  );
  const api = await signInConsole(plane.url, 'admin', password);
  const bytes = (data: unknown) => Buffer.byteLength(JSON.stringify(data));
  // What runs.get answered before ADR 0035: the engine's whole run detail.
  const whole = await plane.engine.getRun(runId);
  const head = (await api.query('runs.get', { id: runId })) as {
    actions: { sequence: number }[];
    events: { id: string }[];
    anomalies: { id: string }[];
  };
  const held = {
    id: runId,
    steps: { after: steps, from: head.actions[0]?.sequence, open: [] },
    events: { after: head.events.at(-1)?.id, from: head.events[0]?.id },
  };
  const idle = await api.query('runs.changes', held);
  await sql.query(
    `insert into "sagaflow"."action_runs" (run_id, sequence, name, status, input, output, attempts)
     select run_id, $2::int + 1, name, status, input, output, attempts from "sagaflow"."action_runs"
      where run_id = $1::uuid and sequence = $2::int`,
    [runId, steps],
  );
  const oneMore = await api.query('runs.changes', held);
  const rows = await sql.query<{ events: number }>(
    `select count(*)::int as events from "sagaflow"."flow_events" where run_id = $1::uuid`,
    [runId],
  );
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  process.stdout.write(
    [
      `run page of a demo.pick-list run with ${steps} steps and ${rows[0]?.events} events (PGlite; JSON bytes)`,
      `  the whole detail (engine getRun: what runs.get answered every second before): ${kb(bytes(whole))}`,
      `  runs.get, the head (${head.actions.length} steps, ${head.events.length} events): ${kb(bytes(head))}`,
      `  runs.changes, nothing new: ${bytes(idle)} bytes`,
      `  runs.changes, one step more: ${kb(bytes(oneMore))}`,
      '',
    ].join('\n'),
  );
} finally {
  await plane.stop();
  rmSync(dir, { recursive: true, force: true });
}
