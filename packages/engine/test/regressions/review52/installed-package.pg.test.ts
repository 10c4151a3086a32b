import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createDatabase as createPgDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

// Review 52: the engine as a new user meets it. Packed with npm, installed with plain npm into a project in
// the system's temp directory (no workspace, no pnpm, no tsx), run with plain node; the README followed
// to the letter. One pack and one install for the file.

const run = promisify(execFile);
const engineDir = fileURLToPath(new URL('../../..', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../../..', import.meta.url));
const hostFiles = fileURLToPath(new URL('./host', import.meta.url));
const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');

/** A process outside the workspace: no `@sagaflow/source` condition, no package manager settings. */
function outsideEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(npm_|pnpm_|NODE_OPTIONS$|INIT_CWD$)/i.test(k)),
  );
  return { ...env, NO_UPDATE_NOTIFIER: '1' };
}

describe('the packed engine, installed with plain npm and used as its README says', () => {
  let project: string;
  let tarball: string;

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), 'sagaflow-review52-'));
    const env = outsideEnv();
    const packed = await run('npm', ['pack', '--json', '--pack-destination', project], {
      cwd: engineDir,
      env,
      timeout: 300_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string }[];
    tarball = info!.filename;
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'host', private: true, type: 'module' }));
    // readme-types.ts is kept as .txt here: it does not type-check (defect 3), and the workspace's one
    // TypeScript program (ADR 0092) takes every .ts under test/.
    for (const f of readdirSync(hostFiles)) cpSync(join(hostFiles, f), join(project, f.replace(/\.txt$/, '')));
    await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        `./${tarball}`,
        '@types/node@20.19.43',
        'pino@10.4.0',
        'zod@4.6.7',
      ],
      { cwd: project, env, timeout: 300_000 },
    );
  }, 600_000);

  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  const node = async (args: string[]) => {
    const { stdout } = await run(process.execPath, args, { cwd: project, env: outsideEnv(), timeout: 120_000 });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
  };

  it('installs on the oldest Node its engines field accepts (20.19.0) with engine-strict npm', async () => {
    // package.json says "engines": { "node": ">=20.19" }; every package it installs must say the same.
    const fresh = join(project, 'engine-strict');
    mkdirSync(fresh);
    writeFileSync(join(fresh, 'package.json'), JSON.stringify({ name: 'strict-host', private: true }));
    const r = await run(
      'npm',
      [
        'install',
        '--dry-run',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--engine-strict',
        '--node-version=20.19.0',
        join(project, tarball),
      ],
      { cwd: fresh, env: outsideEnv(), timeout: 120_000 },
    ).then(
      () => ({ ok: true, refused: '' }),
      (err: Error & { stderr?: string }) => ({
        ok: false,
        refused: (err.stderr ?? err.message)
          .split('\n')
          .filter((l) => /notsup|Required/.test(l))
          .join('\n'),
      }),
    );
    expect(r).toEqual({ ok: true, refused: '' });
  }, 150_000);

  it('importing both entry points adds no process signal or exit listeners (signal handling is the host’s)', async () => {
    expect(await node(['signals-on-import.mjs'])).toEqual({ added: {} });
  }, 60_000);

  it('a flow whose zod input fills a default is started without that field, as typed (tsc strict, NodeNext)', async () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
        },
        files: ['readme-types.ts'],
      }),
    );
    const r = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], {
      cwd: project,
      env: outsideEnv(),
      timeout: 120_000,
    }).catch((err: Error & { stdout?: string }) => ({ stdout: err.stdout || err.message }));
    expect(r.stdout).toBe('');
  }, 150_000);

  it.each(['pglite', 'postgres'])(
    'after the README shutdown (stopWorkers, then db.close) with an action outliving the drain, plain node exits at once (%s)',
    async (kind) => {
      const args = ['shutdown.mjs'];
      if (kind === 'postgres') args.push(await createPgDatabase(inject('pgAdminUrl'), uniqueDatabaseName('r52stop')));
      const child = spawn(process.execPath, args, { cwd: project, env: outsideEnv(), stdio: 'pipe' });
      let stdout = '';
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      const closedAt = new Promise<number>((resolve) =>
        child.stdout.on('data', (c: Buffer) => {
          stdout += c.toString('utf8');
          if (stdout.includes('"at":"closed"')) resolve(Date.now());
        }),
      );
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const closed = await closedAt;
      // Nothing of the engine's may keep the process: a host's orchestrator gives it seconds, not minutes.
      const outcome = await Promise.race([
        exited.then((code) => ({ exited: true, code, afterMs: Date.now() - closed })),
        new Promise<{ exited: false }>((r) => setTimeout(() => r({ exited: false }), 5_000)),
      ]);
      if (!outcome.exited) child.kill('SIGKILL');
      await exited;
      // The engine writing the late outcome again and again to the database the host closed.
      const retriesOnClosed = stderr.split('\n').filter((l) => l.includes('writing step outcomes failed')).length;
      expect({ exited: outcome.exited, retriesOnClosed }).toEqual({ exited: true, retriesOnClosed: 0 });
    },
    90_000,
  );

  it('both entry points type-check under moduleResolution bundler, README shapes (tsc strict)', async () => {
    writeFileSync(
      join(project, 'tsconfig.bundler.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'bundler',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
        },
        files: ['bundler-types.ts'],
      }),
    );
    const r = await run(process.execPath, [tsc, '-p', 'tsconfig.bundler.json'], {
      cwd: project,
      env: outsideEnv(),
      timeout: 120_000,
    }).catch((err: Error & { stdout?: string }) => ({ stdout: err.stdout || err.message }));
    expect(r.stdout).toBe('');
  }, 150_000);

  it('bad input through the public API on PostgreSQL: typed errors with codes and fields, nothing written', async () => {
    const url = await createPgDatabase(inject('pgAdminUrl'), uniqueDatabaseName('r52bad'));
    const r = (await node(['bad-input.mjs', url])) as {
      before: unknown;
      after: unknown;
      firstOutput: unknown;
      hostTx: { rolledBack: boolean; committed: string | null; rowsWithKey: string[] };
      refusals: Record<string, { class: string; code: string | null; field: string | null; message: string }>;
    };
    expect(r.firstOutput).toEqual({ currency: 'EUR' });
    expect(r.after).toEqual(r.before);
    const { refusals } = r;
    expect(refusals.unknownFlow).toMatchObject({ class: 'EngineError', code: 'unknown_flow', field: 'flowName' });
    expect(refusals.invalidInput).toMatchObject({ class: 'EngineError', code: 'invalid_input', field: 'input.amount' });
    expect(refusals.invalidInput!.message.startsWith('input.amount')).toBe(true);
    expect(refusals.duplicateKey).toMatchObject({ class: 'EngineError', code: 'duplicate_business_key' });
    expect(refusals.duplicateKey!.message).toContain('o-1');
    expect(refusals.unknownRun).toMatchObject({ class: 'EngineError', code: 'run_not_found' });
    expect(refusals.notUuid).toMatchObject({ class: 'EngineError', code: 'invalid_input', field: 'runId' });
    expect(refusals.finishedRun).toMatchObject({ class: 'EngineError', code: 'run_not_open' });
    expect(refusals.badPayload).toMatchObject({ class: 'EngineError', code: 'invalid_input', field: 'payload.by' });
    // ADR 0028 from the package: the host's ROLLBACK takes the start back, its COMMIT keeps it; a tx that is
    // neither a pg client nor a Prisma transaction is refused naming tx, before any write.
    expect(refusals.notATransaction).toMatchObject({ class: 'EngineError', code: 'invalid_input', field: 'tx' });
    expect(r.hostTx).toEqual({ rolledBack: true, committed: 'Completed', rowsWithKey: ['o-c'] });
  }, 90_000);

  it('three processes migrating one empty PostgreSQL database at once all start, and it ends current', async () => {
    const url = await createPgDatabase(inject('pgAdminUrl'), uniqueDatabaseName('r52migrate'));
    const migrations = readdirSync(join(repoRoot, 'prisma', 'migrations')).filter((n) => /^\d{4}_/.test(n)).length;
    const all = await Promise.all([1, 2, 3].map(() => node(['migrate.mjs', url])));
    expect(all).toEqual([1, 2, 3].map(() => ({ current: true, applied: migrations })));
  }, 90_000);

  it('a CommonJS consumer on Node 20.19+ requires both entry points', async () => {
    expect(await node(['require.cjs'])).toEqual({ ok: true, createEngine: 'function', createTestEngine: 'function' });
  }, 60_000);

  /** test-kit.mjs runs once for the two tests that read it. */
  let kitRun: Promise<{ stdout: string; stderr: string }> | undefined;
  const testKit = () =>
    (kitRun ??= run(process.execPath, ['test-kit.mjs'], { cwd: project, env: outsideEnv(), timeout: 90_000 }));

  it('the test kit drives sleeps, a signal timeout, a child and a rollback to the end, says nothing, and its process exits', async () => {
    const { stdout, stderr } = await testKit();
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(stderr).toBe('');
    const r = JSON.parse(lines[0]!) as { done: unknown; failed: string; undone: string[]; typo: unknown };
    expect(r.done).toEqual({ status: 'Completed', output: { s: null, c: { c: 1 } } });
    expect(r.failed).toBe('Compensated');
    expect(r.undone).toEqual(['b--1']);
  }, 120_000);

  it('the test kit’s drive refuses a run id that is not a uuid with a typed EngineError naming runId', async () => {
    // getRun answers null for such an id and every engine entry point refuses it as invalid_input
    // naming runId; drive, on the same path, should not surface a Prisma error.
    const { stdout } = await testKit();
    const r = JSON.parse(stdout.trim().split('\n').at(-1)!) as { typo: Record<string, unknown> };
    expect(r.typo).toMatchObject({ class: 'EngineError', code: 'invalid_input' });
  }, 120_000);
});
