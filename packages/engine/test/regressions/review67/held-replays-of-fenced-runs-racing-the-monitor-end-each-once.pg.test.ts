import { describe, expect, it } from 'vitest';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { twoEngines } from './support/two-engines.ts';
import { fenceOnly, insertRun, pass } from './support/tree.ts';

const reason = 'stopped by ops';

/**
 * Review 67, HELD: the monitor racing workers' replays of the runs a terminate fenced (ADR 0140 §3, and the
 * D2 shape of review 66 forming while the monitor walks). Two engines on one PostgreSQL. P → C1…C20, each
 * Ci → Gi, all 'propagate'; P's terminate stops after its fence. Engine A replays all twenty Ci at once (each
 * closes `Cancelled` at its closed window) while engine B, past the grace, runs a monitor pass; then B runs
 * one more. Every run ends once (one terminal event, one `run.finished` on either engine); each Gi, which
 * nobody replayed, is `Terminated` with the batch's reason whatever its Ci ended as; nothing is left open.
 */
describe('held: replays of fenced runs racing the monitor end each run once (postgres)', () => {
  const the = twoEngines(8);

  it('each C ends once (Cancelled or Terminated), each G Terminated once, none left open', async () => {
    const { dbA, a, b } = the;
    const p = await insertRun(dbA);
    const cs: string[] = [];
    const gs: string[] = [];
    for (let i = 0; i < 20; i++) {
      const c = await insertRun(dbA, { parent: p, seq: i + 1 });
      cs.push(c);
      gs.push(await insertRun(dbA, { parent: c, seq: 1 }));
    }
    expect(await fenceOnly(a, dbA, p, reason)).toBe(40);
    const finished = new Map<string, number>();
    for (const e of [a, b])
      e.engine.events.on('run.finished', (ev: { runId: string }) => {
        finished.set(ev.runId, (finished.get(ev.runId) ?? 0) + 1);
      });

    // The monitor's pass first, the replays (last C first, against the walk's id order) right behind it.
    const monitor = pass(b);
    const replays = Promise.all([...cs].reverse().map((c) => executeRun(a.engine.runtime, c)));
    const first = await monitor;
    await replays;
    const second = await pass(b);
    expect(await pass(b)).toBe(0);

    const rows = await dbA.prisma.$queryRaw<{ id: string; status: string; message: string | null; ends: number }[]>`
      select r.id::text as id, r.status, r.error->>'message' as message,
             (select count(*)::int from "sagaflow"."flow_events" e
               where e.run_id = r.id and e.type in ('run.terminated', 'run.cancelled', 'run.completed', 'run.failed')) as ends
        from "sagaflow"."flow_runs" r where r.id = any(${[...cs, ...gs]}::uuid[])`;
    const by = new Map(rows.map((r) => [r.id, r]));
    const cStatus = cs.map((c) => by.get(c)!.status);
    console.log(
      `review67 replay race: monitor passes ended ${first} then ${second}; C: ${cStatus.filter((s) => s === 'Cancelled').length} Cancelled, ${cStatus.filter((s) => s === 'Terminated').length} Terminated`,
    );
    expect(cStatus.every((s) => s === 'Cancelled' || s === 'Terminated')).toBe(true);
    expect(rows.every((r) => r.ends === 1)).toBe(true);
    expect([...cs, ...gs].every((id) => finished.get(id) === 1)).toBe(true);
    for (let i = 0; i < 20; i++)
      expect(by.get(gs[i]!)).toMatchObject({
        status: 'Terminated',
        message: `parent ${cs[i]} was terminated: parent ${p} was terminated: ${reason}`,
      });
  });
});
