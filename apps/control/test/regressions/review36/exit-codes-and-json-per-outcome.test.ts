import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import {
  apiClient,
  createTestOperator,
  signInCookie,
  startWaitingRun,
  testDatabaseUrl,
} from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';
import { runCli, type CliAnswer } from '../../support/run-cli.ts';

/**
 * README "Operator CLI" exit table and ADR 0021 "Exit status": 0 done, 1 error (unreachable, not found, server
 * error), 2 refused (repair_conflict, repair_refused, a dry run that would not apply), 3 unauthenticated or
 * forbidden, 4 awaiting approval, 64 usage. "--json prints one JSON document on stdout instead, an error too".
 * Each outcome class is driven against a real control plane (or a closed port), with and without --json.
 */
describe('the exit status and --json output of each outcome class', () => {
  let plane: ControlPlane;
  let cookie = '';
  let token = '';
  let viewerToken = '';
  let revokedToken = '';
  beforeAll(async () => {
    const url = await testDatabaseUrl('r36_exit_codes');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    const api = apiClient(plane.url, cookie);
    token = (await api.tokens.create.mutate({ name: 'cli' })).token;
    const revoked = await api.tokens.create.mutate({ name: 'old' });
    await api.tokens.revoke.mutate({ id: revoked.id });
    revokedToken = revoked.token;
    const viewerCookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    viewerToken = (await apiClient(plane.url, viewerCookie).tokens.create.mutate({ name: 'ro' })).token;
  });
  afterAll(async () => {
    await plane.stop();
  });

  const env = (t = token, url = plane.url) => ({ SAGAFLOW_URL: url, SAGAFLOW_TOKEN: t });
  /** A port nothing listens on. */
  const closedPort = async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const { port } = s.address() as { port: number };
    await new Promise<void>((r) => s.close(() => r()));
    return port;
  };
  /** Runs the command twice, for people and with --json; stdout with --json must be exactly one JSON document. */
  async function both(
    args: string[],
    e: Record<string, string>,
  ): Promise<{ human: CliAnswer; json: CliAnswer; doc: unknown }> {
    const human = await runCli(args, e);
    const json = await runCli([...args, '--json'], e);
    let doc: unknown;
    expect(() => {
      doc = JSON.parse(json.out) as unknown;
    }, `stdout with --json: ${json.out}`).not.toThrow();
    return { human, json, doc };
  }

  it('held: every class has its documented, distinct status, for people and with --json', async () => {
    const outcomes: Record<string, number[]> = {};
    const record = async (label: string, args: string[], e: Record<string, string>) => {
      const { human, json, doc } = await both(args, e);
      outcomes[label] = [human.code, json.code];
      // An error is {"error":{…,"exitCode"}}; a refused dry run and an awaiting draft are their command's document.
      const error = (doc as { error?: { exitCode: number } }).error;
      if (error) expect(error.exitCode).toBe(json.code);
    };
    const waiting = await startWaitingRun(plane, cookie);
    await record('done (a read)', ['run', 'show', waiting], env());
    await record('done (a dry run that would apply)', ['kick', waiting, '--dry-run'], env());
    await record('refused (a conflict)', ['kick', waiting, '--reason', 'x', '--expect-status', 'Running'], env());
    await record('refused (a dry run that would not apply)', ['retry', waiting, '--step', '1', '--dry-run'], env());
    const gated = await startWaitingRun(plane, cookie);
    await record('awaiting approval', ['terminate', gated, '--reason', 'x'], env());
    await record('not found', ['run', 'show', randomUUID()], env());
    await record('bad input (the server refused a field)', ['runs', 'list', '--status', 'Bogus'], env());
    await record('unauthenticated (a revoked token)', ['runs', 'list'], env(revokedToken));
    // A run still Waiting now: a demo reservation moves on after its 30 s confirm window, and the records
    // above take longer than that on a loaded machine (the kick would then be refused as a conflict first).
    const stillWaiting = await startWaitingRun(plane, cookie);
    await record('forbidden (a viewer repairing)', ['kick', stillWaiting, '--reason', 'x'], env(viewerToken));
    await record('no token', ['runs', 'list'], { SAGAFLOW_URL: plane.url });
    await record('unreachable', ['runs', 'list'], env(token, `http://127.0.0.1:${await closedPort()}`));
    expect(outcomes).toEqual({
      'done (a read)': [0, 0],
      'done (a dry run that would apply)': [0, 0],
      'refused (a conflict)': [2, 2],
      'refused (a dry run that would not apply)': [2, 2],
      'awaiting approval': [4, 4],
      'not found': [1, 1],
      'bad input (the server refused a field)': [64, 64],
      'unauthenticated (a revoked token)': [3, 3],
      'forbidden (a viewer repairing)': [3, 3],
      'no token': [3, 3],
      unreachable: [1, 1],
    });
  }, 120_000);

  it('held: a conflict prints the state now and how to look first; with --json the body carries it', async () => {
    const waiting = await startWaitingRun(plane, cookie);
    const { human, doc } = await both(['kick', waiting, '--reason', 'x', '--expect-status', 'Running'], env());
    expect(human.err).toContain(`sagaflow run show ${waiting}`);
    expect(JSON.stringify(doc)).toContain('"runStatus":"Waiting"');
  });

  it('held: no token in any output: a refused, an unreachable and a forbidden call print neither token', async () => {
    const waiting = await startWaitingRun(plane, cookie);
    const answers = [
      await runCli(['whoami', '--json'], env(revokedToken)),
      await runCli(['kick', waiting, '--reason', 'x', '--json'], env(viewerToken)),
      await runCli(['runs', 'list', '--json'], env(token, `http://127.0.0.1:${await closedPort()}`)),
    ];
    for (const a of answers) {
      for (const t of [token, viewerToken, revokedToken]) {
        expect(a.out + a.err).not.toContain(t);
        expect(a.out + a.err).not.toContain(t.slice(12));
      }
    }
  });

  it('held: a list longer than its page says how to get the next one, and --json carries nextCursor', async () => {
    await startWaitingRun(plane, cookie);
    await startWaitingRun(plane, cookie);
    const human = await runCli(['runs', 'list', '--limit', '1'], env());
    expect(human.code).toBe(0);
    expect(human.out).toMatch(/next page: sagaflow runs list --limit 1 --cursor \S+/);
    const json = await runCli(['runs', 'list', '--limit', '1', '--json'], env());
    const page = JSON.parse(json.out) as { items: unknown[]; nextCursor: string | null };
    expect(page.items).toHaveLength(1);
    expect(page.nextCursor).not.toBeNull();
    const next = await runCli(['runs', 'list', '--limit', '1', '--cursor', page.nextCursor ?? '', '--json'], env());
    expect(next.code).toBe(0);
  });
});
