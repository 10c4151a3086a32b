import { createDatabase } from '@sagaflow/engine';
import { describe, expect, it } from 'vitest';
import { apiClient, signInCookie, testPassword } from '../../support/test-plane.ts';
import { controlProcess, runCli, until } from './control-process.ts';
import { migratedDataDir } from '../../support/migrated-data-dir.ts';

const terminal = new Set(['Completed', 'Failed', 'Compensated', 'Expired', 'Cancelled', 'Terminated']);

// ADR 0014 (Consequences): a SIGKILLed holder's successor "sees every committed run"; ADR 0010: a
// finished step's outcome is written on its own, and a step whose worker is gone is stuck and
// reclaimable (never run twice silently); engine README: a job leased to a dead process is redelivered
// once `worker.lease_seconds` has passed. So: every run the API acknowledged before the kill is there
// after the restart and ends (or is stuck, with a reason), and no step has two outcomes.
describe('review 34: SIGKILL of the control plane with runs in flight, then a restart on the same directory', () => {
  it('every acknowledged run is kept and finishes on the successor, each step completed once', async () => {
    const dataDir = await migratedDataDir('r34-kill');
    const env = {
      CONTROL_PORT: '0',
      SAGAFLOW_DATA_DIR: dataDir,
      SAGAFLOW_ADMIN_PASSWORD: testPassword,
      // A dead process's jobs come back after 2 s instead of a minute, and its steps are named stuck
      // (owner_gone) 3 s after its last heartbeat instead of 30, seen by a monitor pass each second.
      SAGAFLOW_ENGINE_CONFIG: JSON.stringify({
        worker: { lease_seconds: 2, heartbeat_interval_ms: 500, dead_after_seconds: 3 },
      }),
      SAGAFLOW_MONITOR_INTERVAL_MS: '1000',
    };
    const first = controlProcess(env);
    const url = await first.listening;
    const api = apiClient(url, await signInCookie(url, 'admin'));

    // Starts keep coming, 8 at a time; the kill lands once 48 were acknowledged, with 8 more in the air.
    const acknowledged: string[] = [];
    let killed = false;
    const starter = async (lane: number) => {
      for (let i = 0; !killed; i++) {
        const ack = await api.runs.start
          .mutate({
            flowName: 'demo.order',
            input: { orderId: `k${lane}-${i}`, amount: 1 },
            businessKey: `k${lane}-${i}`,
          })
          .catch(() => null);
        if (!ack) return;
        acknowledged.push(ack.runId);
        if (acknowledged.length >= 48 && !killed) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, lane) => starter(lane)));
    expect((await first.exited).signal).toBe('SIGKILL');
    const ids = [...new Set(acknowledged)];
    expect(ids.length).toBe(acknowledged.length);

    const second = controlProcess(env);
    const url2 = await second.listening;
    const api2 = apiClient(url2, await signInCookie(url2, 'admin'));
    const stuck: { id: string; reason: string }[] = [];
    try {
      for (const id of ids) {
        const r = await until(async () => {
          const { run } = await api2.runs.get.query({ id });
          const v = run as { status: string; stuckReason?: string | null };
          return terminal.has(v.status) || v.stuckReason ? v : undefined;
        });
        if (r.stuckReason) stuck.push({ id, reason: r.stuckReason });
      }
      // A step that was running in the killed process is stuck, never re-run silently (ADR 0010): its
      // reason names the step and the way out; the operator's kick (over HTTP, audited) runs it again.
      for (const s of stuck)
        expect(s.reason).toMatch(/^owner_gone: step \d+ \(demo\.[a-z-]+\) held by worker .* kick the run/);
      const { token } = await api2.tokens.create.mutate({ name: 'r34' });
      for (const s of stuck) {
        const kicked = await runCli(['kick', s.id, '--reason', 'review 34: its worker was SIGKILLed'], {
          SAGAFLOW_URL: url2,
          SAGAFLOW_TOKEN: token,
        });
        expect(kicked.code, kicked.err).toBe(0);
      }
      for (const id of ids)
        await until(async () => ((await api2.runs.get.query({ id })).run.status === 'Completed' ? true : undefined));
    } finally {
      second.child.kill('SIGTERM');
    }
    expect((await second.exited).code).toBe(0);

    const db = await createDatabase({ kind: 'pglite', dataDir });
    try {
      const runs = await db.driver.query<{ id: string; status: string; stuck_reason: string | null }>(
        `select id::text, status, stuck_reason from sagaflow.flow_runs where id = any($1::uuid[])`,
        [ids],
      );
      expect(runs).toHaveLength(ids.length);
      expect(runs.filter((r) => r.status !== 'Completed')).toEqual([]);
      const twice = await db.driver.query<{ run_id: string; sequence: number; n: number }>(
        `select run_id::text, sequence, count(*)::int as n from sagaflow.flow_events
            where run_id = any($1::uuid[]) and type = 'action.completed' group by 1, 2 having count(*) > 1`,
        [ids],
      );
      expect(twice).toEqual([]);
      const steps = await db.driver.query<{ n: number }>(
        `select count(*)::int as n from sagaflow.action_runs where run_id = any($1::uuid[]) and status = 'Completed'`,
        [ids],
      );
      expect(steps[0]?.n).toBe(ids.length * 3);
    } finally {
      await db.close();
    }
  }, 600_000);
});
