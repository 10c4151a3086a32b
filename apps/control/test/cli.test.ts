import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createDatabase, type Database, type Engine } from '@sagaflow/engine';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { testDatabaseUrl } from './support/test-plane.ts';
import { createControlEngine } from '../src/control-engine.ts';
import { parseEnv } from '../src/env.ts';
import { controlEntry, withoutSourceCondition } from './support/compiled-control.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs the real CLI process, as `npm run sagaflow -- ...` does, from this run's build (support/compiled-control.ts). */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...controlEntry('cli', 'build'), ...args],
      {
        cwd: root,
        env: {
          ...process.env,
          NODE_OPTIONS: withoutSourceCondition(process.env.NODE_OPTIONS),
          LOG_LEVEL: 'silent',
          ...env,
        },
        timeout: 60_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout, err: stderr }),
    );
  });
}

describe('the sagaflow CLI: local maintenance sweeps against PostgreSQL (repairs: cli-over-http.test.ts)', () => {
  let url: string;
  let db: Database;
  let engine: Engine;
  beforeAll(async () => {
    url = await testDatabaseUrl('cli');
    db = await createDatabase({ kind: 'postgres', url });
    engine = createControlEngine(db, parseEnv({ DATABASE_URL: url }), pino({ level: 'silent' }));
    engine.startWorkers();
  });
  afterAll(async () => {
    await engine.stopWorkers(5000);
    await db.close();
  });

  const statusOf = async (runId: string) => (await engine.getRun(runId))?.run.status;
  const until = async (runId: string, want: string) => {
    for (let i = 0; i < 400; i++) {
      if ((await statusOf(runId)) === want) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`run ${runId} did not reach ${want}; it is ${await statusOf(runId)}`);
  };

  it('monitor sweep expires an overdue run and prints what it did', async () => {
    const { runId } = await engine.startFlow('demo.reservation', { orderId: 'cli-1' }, { expiresInSeconds: 1 });
    await until(runId, 'Waiting');
    await new Promise((r) => setTimeout(r, 1100));
    const r = await cli(['monitor', 'sweep'], { DATABASE_URL: url });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ swept: true, runs: { expired: [runId], failed: [] } });
    await until(runId, 'Expired');
  });

  it("sweeps take the replicas' monitor lease: while another replica holds it, the CLI sweeps nothing and says so", async () => {
    await db.prisma.$executeRawUnsafe(
      `insert into sagaflow.leases (name, holder, expires_at) values ('monitor', 'replica-b', now() + interval '60 seconds')`,
    );
    try {
      for (const args of [
        ['monitor', 'sweep'],
        ['doctor', 'sweep'],
      ]) {
        const held = await cli(args, { DATABASE_URL: url });
        expect(held.code).toBe(2);
        expect(JSON.parse(held.out)).toMatchObject({
          swept: false,
          reason: expect.stringMatching(/another replica holds the monitor lease/) as unknown,
        });
      }
    } finally {
      await db.prisma.$executeRawUnsafe(`delete from sagaflow.leases where name = 'monitor'`);
    }
    const doctor = await cli(['doctor', 'sweep'], { DATABASE_URL: url });
    expect(doctor.code).toBe(0);
    expect(JSON.parse(doctor.out)).toMatchObject({ swept: true, doctor: { redispatched: [] }, runs: { expired: [] } });
  });

  it('bad input gets a usage error naming what is wrong, and touches nothing', async () => {
    const bad = await cli(['kick', 'not-a-run'], { DATABASE_URL: url });
    expect(bad.code).toBe(64);
    expect(bad.err).toMatch(/run-id must be a run's UUID, got "not-a-run"/);
    const unknown = await cli(['monitor', 'sweeep'], { DATABASE_URL: url });
    expect(unknown.code).toBe(64);
    expect(unknown.err).toMatch(/unknown command "monitor sweeep"/);
    const badUrl = await cli(['doctor', 'sweep'], { DATABASE_URL: 'mysql://x' });
    expect(badUrl.code).toBe(1);
    expect(badUrl.err).toMatch(/DATABASE_URL/);
  });
});
