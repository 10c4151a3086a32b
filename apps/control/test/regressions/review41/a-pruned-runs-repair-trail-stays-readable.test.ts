import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import {
  apiClient,
  createTestOperator,
  rejection,
  signInCookie,
  startWaitingRun,
  testDatabaseUrl,
} from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

/**
 * Review 41, ADR 0027: retention deletes a finished run's history but never the audit trail
 * (`repair_commands`, `audit_events`): "the audit trail is what an auditor asks for years later".
 * Held: a run cancelled by an operator through the API, then pruned by the engine's retention,
 * is gone from the run reads (404), while the audit list filtered by that run's id still answers the
 * terminate with its actor, reason and outcome; an open run beside it is untouched by the same prune.
 */
describe('review 41: a pruned run’s repair trail stays in the audit list', () => {
  let plane: ControlPlane;
  let cookie = '';
  let operator = '';
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('r41_audit_prune'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    operator = await createTestOperator(plane, 'admin');
    cookie = await signInCookie(plane.url, operator);
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('held: after the run is pruned, audit.page by its id still shows who cancelled it and why', async () => {
    const api = apiClient(plane.url, cookie);
    const doomed = await startWaitingRun(plane, cookie);
    const open = await startWaitingRun(plane, cookie);
    const applied = await api.repairs.applyOne.mutate({
      kind: 'run.cancel',
      target: { runId: doomed },
      expected: { runStatus: 'Waiting' },
      reason: 'review 41: customer gone',
      idempotencyKey: randomUUID(),
    });
    expect(applied).toMatchObject({ status: 'applied' });
    // Progress, not a sleep: wait until retention (1 s window) counts the cancelled run, once finished, as prunable.
    for (let i = 0; ; i++) {
      const preview = await plane.engine.retention.preview({ olderThanSeconds: 1 });
      if (preview.rows.flow_runs >= 1) break;
      if (i > 2000) throw new Error('the cancelled run never became prunable');
      await new Promise((r) => setTimeout(r, 25));
    }
    const report = await plane.engine.retention.prune({ olderThanSeconds: 1 });
    expect(report.deleted.flow_runs).toBe(1);

    expect((await rejection(api.runs.get.query({ id: doomed }))).status).toBe(404);
    const download = await fetch(`${plane.url}/history/runs/${doomed}`, { headers: { cookie } });
    expect(download.status).toBe(404);
    expect((await plane.engine.getRun(open))?.run.status).toBe('Waiting');

    const trail = await api.audit.page.query({ target: doomed });
    expect(trail.items.filter((e) => e.source === 'repair')).toEqual([
      expect.objectContaining({
        action: 'run.cancel',
        actor: operator,
        outcome: 'applied',
        reason: 'review 41: customer gone',
        runId: doomed,
      }),
    ]);
  }, 60_000);
  /**
   * ADR 0102 keeps ids in lower case and the reads that take an id accept it in either case (runs.page's
   * search, the history download). The audit list's `target` filter is matched as exact text against
   * `target_id`: an auditor pasting a run id as another tool prints it (upper case: .NET's Guid, SQL
   * Server's uniqueidentifier) is told the run has no repairs at all.
   */
  it('audit.page finds a run’s repairs by its id in upper case, as runs.page finds the run', async () => {
    const api = apiClient(plane.url, cookie);
    const runId = await startWaitingRun(plane, cookie);
    await api.repairs.applyOne.mutate({
      kind: 'run.cancel',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      reason: 'review 41: upper-case lookup',
      idempotencyKey: randomUUID(),
    });
    const upper = runId.toUpperCase();
    expect((await api.runs.page.query({ search: upper })).items.map((r) => r.id)).toEqual([runId]);
    expect((await api.audit.page.query({ target: runId })).items.map((e) => e.action)).toContain('run.cancel');
    expect((await api.audit.page.query({ target: upper })).items.map((e) => e.action)).toContain('run.cancel');
  }, 60_000);
});
