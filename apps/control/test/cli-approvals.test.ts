import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { apiClient, createTestOperator, signInCookie, startWaitingRun, testDatabaseUrl } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';
import { runCli as cli } from './support/run-cli.ts';

/**
 * The second operator decides a gated repair from the CLI (ADR 0020, ADR 0113): `approvals list`,
 * `approval show` (previewed again against the state now), `approve`, `reject`. The real CLI as a
 * child process against a real control plane on PostgreSQL; each outcome is checked in the tables.
 */
describe('approvals from the CLI: the second operator lists, looks, approves and rejects', () => {
  let plane: ControlPlane;
  const env = { ana: {}, ben: {}, vic: {} } as Record<'ana' | 'ben' | 'vic', Record<string, string>>;
  const cookies = { ana: '', ben: '', vic: '' };
  beforeAll(async () => {
    const url = await testDatabaseUrl('cli_approvals');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    for (const [who, role] of [
      ['ana', 'operator'],
      ['ben', 'operator'],
      ['vic', 'viewer'],
    ] as const) {
      cookies[who] = await signInCookie(plane.url, await createTestOperator(plane, role));
      const { token } = await apiClient(plane.url, cookies[who]).tokens.create.mutate({ name: `${who}-cli` });
      env[who] = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
    }
  });
  afterAll(async () => {
    await plane?.stop();
  });

  /** ana drafts a gated terminate of a Waiting run from the CLI: exit 4 and the approval's id. */
  const draftTerminate = async () => {
    const runId = await startWaitingRun(plane, cookies.ana);
    const drafted = await cli(['terminate', runId, '--reason', 'charged twice'], env.ana);
    expect(drafted.code, drafted.err + drafted.out).toBe(4);
    expect(drafted.out).toContain('CLI: sagaflow approve / reject');
    const approvalId = /approval\s+([0-9a-f-]{36})/.exec(drafted.out)?.[1] ?? '';
    expect(approvalId).not.toBe('');
    return { runId, approvalId };
  };
  const runStatus = async (runId: string) => (await plane.engine.getRun(runId))?.run.status;
  const approvalRow = (id: string) => plane.db.prisma.repairApproval.findUniqueOrThrow({ where: { id } });
  const repairRows = (runId: string) =>
    plane.db.prisma.repairCommand.findMany({ where: { target_id: runId }, select: { status: true, actor: true } });

  it('ben lists and shows the pending draft, the drafter cannot approve it, ben approves it once', async () => {
    const { runId, approvalId } = await draftTerminate();

    const listed = await cli(['approvals', 'list'], env.ben);
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toMatch(new RegExp(`${approvalId}\\s+run\\.terminate\\s+run ${runId}\\s+pending`));
    expect(listed.out).toContain('sagaflow approve <id>');

    const shown = await cli(['approval', 'show', approvalId], env.ben);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toContain('charged twice');
    expect(shown.out).toContain('it would apply to the state now:');
    expect(shown.out).toMatch(/transition\s+run .*Waiting → Terminated/);
    expect(shown.out).toContain(`decide: sagaflow approve ${approvalId}`);

    // The drafter is refused (two-person rule): exit 3, nothing applied.
    const own = await cli(['approve', approvalId], env.ana);
    expect(own.code, own.out).toBe(3);
    expect(own.err).toContain('two-person rule');
    expect(await runStatus(runId)).toBe('Waiting');
    expect((await approvalRow(approvalId)).status).toBe('pending');

    const approved = await cli(['approve', approvalId], env.ben);
    expect(approved.code, approved.err + approved.out).toBe(0);
    expect(approved.out).toContain(`run.terminate on run ${runId} approved and applied`);
    expect(await runStatus(runId)).toBe('Terminated');
    expect(await approvalRow(approvalId)).toMatchObject({ status: 'applied' });
    expect(await repairRows(runId)).toHaveLength(1);

    // Again: already decided, refused (2) and nothing is done twice.
    const again = await cli(['approve', approvalId, '--json'], env.ben);
    expect(again.code).toBe(2);
    expect(again.err).toContain('already applied');
    expect(await repairRows(runId)).toHaveLength(1);

    // Once decided it leaves the default (pending) list and shows under decided.
    expect((await cli(['approvals', 'list'], env.ben)).out).not.toContain(approvalId);
    expect((await cli(['approvals', 'list', '--status', 'decided'], env.vic)).out).toMatch(
      new RegExp(`${approvalId}\\s+run\\.terminate\\s+run ${runId}\\s+applied`),
    );
  });

  it('a draft whose run moved on: show says it would not apply, approve exits 2 and changes nothing', async () => {
    const { runId, approvalId } = await draftTerminate();
    await plane.engine.cancel(runId, { reason: 'customer asked' });
    // The cancellation lands when a worker replays the run: wait until it has moved on.
    for (let i = 0; i < 400 && (await runStatus(runId)) === 'Waiting'; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await runStatus(runId)).not.toBe('Waiting');

    const shown = await cli(['approval', 'show', approvalId], env.ben);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toContain('it would NOT apply now: the state moved to');

    const approved = await cli(['approve', approvalId], env.ben);
    expect(approved.code, approved.out).toBe(2);
    expect(approved.err).toContain('draft the command again against the state now');
    expect((await approvalRow(approvalId)).status).toBe('conflict');
    expect(await repairRows(runId)).toEqual([{ status: 'conflict', actor: expect.any(String) as string }]);
    expect(await runStatus(runId)).not.toBe('Terminated');
  });

  it('reject needs a reason; rejected, nothing is applied and a later approve is refused', async () => {
    const { runId, approvalId } = await draftTerminate();
    const bare = await cli(['reject', approvalId], env.ben);
    expect(bare.code).toBe(64);
    expect(bare.err).toContain('reject needs --reason');
    expect((await approvalRow(approvalId)).status).toBe('pending');

    const rejected = await cli(['reject', approvalId, '--reason', 'not the double charge'], env.ben);
    expect(rejected.code, rejected.err).toBe(0);
    expect(rejected.out).toContain('rejected: nothing was applied');
    expect(await approvalRow(approvalId)).toMatchObject({
      status: 'rejected',
      decision_reason: 'not the double charge',
    });
    const trail = await plane.db.prisma.auditEvent.findMany({
      where: { action: 'repair_rejected', target_id: approvalId },
    });
    expect(trail).toHaveLength(1);

    const late = await cli(['approve', approvalId], env.ben);
    expect(late.code).toBe(2);
    expect(late.err).toContain('already rejected');
    expect(await runStatus(runId)).toBe('Waiting');
    const shown = await cli(['approval', 'show', approvalId], env.vic);
    expect(shown.out).toContain('rejected by');
    expect(shown.out).toContain('not the double charge');
  });

  it('a viewer reads the queue and the draft but cannot decide; bad command lines are 64', async () => {
    const { runId, approvalId } = await draftTerminate();
    const shown = await cli(['approval', 'show', approvalId, '--json'], env.vic);
    expect(shown.code, shown.err).toBe(0);
    const doc = JSON.parse(shown.out) as { approval: { id: string; status: string }; previewNow?: unknown };
    expect(doc.approval).toMatchObject({ id: approvalId, status: 'pending' });
    expect(doc.previewNow).toBe('forbidden');
    expect((await cli(['approval', 'show', approvalId], env.vic)).out).toContain('needs the operator role');

    const viewerApproves = await cli(['approve', approvalId], env.vic);
    expect(viewerApproves.code).toBe(3);
    const viewerRejects = await cli(['reject', approvalId, '--reason', 'no'], env.vic);
    expect(viewerRejects.code).toBe(3);
    expect((await approvalRow(approvalId)).status).toBe('pending');
    expect(await runStatus(runId)).toBe('Waiting');

    const bogus = await cli(['approvals', 'list', '--status', 'bogus'], env.vic);
    expect(bogus.code).toBe(64);
    expect(bogus.err).toContain('input.status');
    expect((await cli(['approvals', 'list', '--status', 'pending', '--status', 'applied'], env.vic)).code).toBe(64);
    expect((await cli(['approve', 'not-a-uuid'], env.ben)).code).toBe(64);
    const unknown = await cli(['approve', randomUUID()], env.ben);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('no approval');
  });

  it('the audit trail filtered by a run lists the drafts and rejections of commands on it (ADR 0119)', async () => {
    const rejected = await draftTerminate();
    expect((await cli(['reject', rejected.approvalId, '--reason', 'wrong run'], env.ben)).code).toBe(0);
    const applied = await draftTerminate();
    expect((await cli(['approve', applied.approvalId], env.ben)).code).toBe(0);
    const trail = async (target: string) =>
      (await apiClient(plane.url, cookies.vic).audit.page.query({ target })).items.map((e) => [e.action, e.outcome]);
    expect(await trail(rejected.runId)).toEqual([
      ['repair_rejected', 'rejected'],
      ['repair_drafted', 'pending'],
      ['run_started', expect.any(String) as string],
    ]);
    expect(await trail(rejected.runId.toUpperCase())).toEqual(await trail(rejected.runId));
    expect(await trail(applied.runId)).toEqual([
      ['run.terminate', 'applied'],
      ['repair_drafted', 'pending'],
      ['run_started', expect.any(String) as string],
    ]);
    // Only its own: the other run's draft is not listed.
    const repairSource = await apiClient(plane.url, cookies.vic).audit.page.query({
      target: applied.runId,
      source: 'repair',
    });
    expect(repairSource.items.map((e) => e.action)).toEqual(['run.terminate', 'repair_drafted']);
  });

  it('help with --json is one JSON document', async () => {
    const help = await cli(['help', '--json'], {});
    expect(help.code).toBe(0);
    expect((JSON.parse(help.out) as { usage: string }).usage).toContain('approve <approval-id>');
  });
});
