import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createDatabase as createPgDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const run = promisify(execFile);
const engineDir = fileURLToPath(new URL('../..', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../..', import.meta.url));
const hostFiles = fileURLToPath(new URL('./host', import.meta.url));
const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const exampleService = join(repoRoot, 'examples', 'embedded-http-service');

/**
 * The environment of a process outside the workspace: no `@sagaflow/source` condition (which would
 * point at sources the tarball does not ship) and none of the package manager's npm_* settings.
 */
function outsideEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(npm_|pnpm_|NODE_OPTIONS$|INIT_CWD$)/i.test(k)),
  );
  return { ...env, NO_UPDATE_NOTIFIER: '1' };
}

/** The workspace catalog's pinned versions (pnpm-workspace.yaml): the engine must ship the same ones. */
function catalogVersions(): Map<string, string> {
  const yaml = readFileSync(join(repoRoot, 'pnpm-workspace.yaml'), 'utf8');
  const block = yaml.split(/^catalog:\n/m)[1]?.split(/^\S/m)[0] ?? '';
  return new Map([...block.matchAll(/^ {2}'?([^':]+)'?: (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** The output of a `tsc` run: '' when it found nothing. */
const typecheck = (cwd: string, config: string) =>
  run(process.execPath, [tsc, '-p', config], { cwd, env: outsideEnv(), timeout: 180_000 }).then(
    () => '',
    (err: Error & { stdout?: string }) => err.stdout || err.message,
  );

/** tsc's diagnostics for one file (each with its continuation lines), or for every file but it. */
function diagnostics(output: string, file: string, which: 'of' | 'besides'): string {
  const blocks = output.split(/\n(?=\S)/).filter((b) => b.trim() !== '');
  return blocks.filter((b) => b.startsWith(`${file}(`) === (which === 'of')).join('\n');
}

const compilerOptions = { target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] };

// Packs with npm, installs with npm into a project in the system's temp directory (outside the
// workspace: no links, no tsx, no catalog), then runs it with plain node. npm takes what its cache
// holds and asks the registry for the rest (CI has the registry). Slow by nature: one file, one pack
// and one install for every case (review 52's new-user cases included), the type checks run at once.
describe('the packed engine, installed with plain npm into a project outside the workspace', () => {
  let project: string;
  let tarball: string;
  let tarballFiles: string[];
  /** tsc under NodeNext over host.ts and the README's examples (readme-types.ts), and under bundler. */
  let nodeNextTypes: string;
  let bundlerTypes: string;
  const manifest = () =>
    JSON.parse(readFileSync(join(project, 'node_modules', '@sagaflow', 'engine', 'package.json'), 'utf8')) as {
      engines: { node: string };
      dependencies: Record<string, string>;
      peerDependencies?: Record<string, string>;
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
      scripts?: Record<string, string>;
    };

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), 'sagaflow-host-'));
    const env = outsideEnv();
    const packed = await run('npm', ['pack', '--json', '--pack-destination', project], {
      cwd: engineDir,
      env,
      timeout: 300_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as {
      filename: string;
      files: { path: string }[];
    }[];
    tarball = info!.filename;
    tarballFiles = info!.files.map((f) => f.path);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'host', private: true, type: 'module' }));
    // The .ts.txt files are TypeScript a user writes, kept out of the workspace's one program (ADR 0092).
    for (const f of readdirSync(hostFiles)) cpSync(join(hostFiles, f), join(project, f.replace(/\.txt$/, '')));
    // The TypeScript host's own settings: strict, Node's ESM resolution, and the libraries' .d.ts checked too.
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { ...compilerOptions, module: 'NodeNext', moduleResolution: 'NodeNext' },
        files: ['host.ts', 'readme-types.ts'],
      }),
    );
    // A Vite or webpack service's settings.
    writeFileSync(
      join(project, 'tsconfig.bundler.json'),
      JSON.stringify({
        compilerOptions: { ...compilerOptions, module: 'ESNext', moduleResolution: 'bundler' },
        files: ['bundler-types.ts'],
      }),
    );
    // The example service, compiled against the engine's build (its types from dist/, which the pack
    // has just built) into the project, while npm installs the tarball and the host's two type checks run.
    const outDir = join(project, 'signup-service');
    const example = run(
      process.execPath,
      [tsc, '-p', join(exampleService, 'tsconfig.build.json'), '--outDir', outDir],
      {
        env,
        timeout: 180_000,
      },
    );
    example.catch(() => undefined);
    const catalog = catalogVersions();
    const pinned = ['@types/node', 'pino', 'zod'].map((name) => `${name}@${catalog.get(name)}`);
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', `./${info!.filename}`, ...pinned], {
      cwd: project,
      env,
      timeout: 300_000,
    });
    [nodeNextTypes, bundlerTypes] = await Promise.all([
      typecheck(project, 'tsconfig.json'),
      typecheck(project, 'tsconfig.bundler.json'),
      example,
    ]);
  }, 660_000);

  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('ships ESM, .d.ts and source maps, every migration and the compiled Prisma client; nothing to generate at install', () => {
    for (const f of ['index', 'testing/index', 'generated/prisma/client']) {
      expect(tarballFiles).toContain(`dist/${f}.js`);
      expect(tarballFiles).toContain(`dist/${f}.d.ts`);
      expect(tarballFiles).toContain(`dist/${f}.js.map`);
    }
    const migrations = readdirSync(join(repoRoot, 'prisma', 'migrations')).filter((n) => /^\d{4}_/.test(n));
    expect(migrations.length).toBeGreaterThan(0);
    for (const m of migrations) expect(tarballFiles).toContain(`migrations/${m}/migration.sql`);
    expect(tarballFiles.filter((f) => f.startsWith('src/') || f.includes('.test.'))).toEqual([]);
    const { dependencies, scripts = {} } = manifest();
    expect(Object.keys(scripts).filter((s) => /install/.test(s))).toEqual([]);
    // Plain npm cannot read pnpm's `catalog:`; the versions written instead are the catalog's.
    const catalog = catalogVersions();
    for (const [name, version] of Object.entries(dependencies))
      expect([name, version]).toEqual([name, catalog.get(name)]);
    // The NATS clients are optional peers (ADR 0128): not installed with the engine (they need Node 22),
    // at a range the catalog's pinned version (what the workspace tests) satisfies.
    const { peerDependencies = {}, peerDependenciesMeta = {} } = manifest();
    const nats = ['@nats-io/jetstream', '@nats-io/transport-node'];
    expect(Object.keys(dependencies).filter((n) => n.startsWith('@nats-io/'))).toEqual([]);
    expect(Object.keys(peerDependencies).sort()).toEqual(nats);
    for (const name of nats) {
      expect([name, peerDependenciesMeta[name]]).toEqual([name, { optional: true }]);
      expect([name, peerDependencies[name]]).toEqual([name, `^${catalog.get(name)}`]);
    }
    // postpack removed the copy again: the repository keeps one source of migrations.
    expect(existsSync(join(engineDir, 'migrations'))).toBe(false);
  });

  const host = async (args: string[]) => {
    const { stdout } = await run(process.execPath, ['host.mjs', ...args], {
      cwd: project,
      env: outsideEnv(),
      timeout: 180_000,
    });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      migrations: number;
      completed: { status: string; output: unknown };
      compensated: { status: string };
      undone: string[];
    };
  };
  const expected = {
    completed: { status: 'Completed', output: { reservation: 'r-o-1', charge: 'c-o-1' } },
    compensated: { status: 'Compensated' },
    undone: ['r-o-2'],
  };

  it('plain node migrates an embedded PGlite, runs a flow to Completed and one to Compensated, and exits on its own', async () => {
    const r = await host(['pglite']);
    expect(r).toMatchObject(expected);
    expect(r.migrations).toBe(
      readdirSync(join(repoRoot, 'prisma', 'migrations')).filter((n) => /^\d{4}_/.test(n)).length,
    );
  }, 200_000);

  it('the same on a PostgreSQL 15 server, from an empty database', async () => {
    const url = await createPgDatabase(inject('pgAdminUrl'), uniqueDatabaseName('host'));
    expect(await host(['postgres', url])).toMatchObject(expected);
  }, 200_000);

  it('a TypeScript host type-checks against the shipped .d.ts with tsc --noEmit --strict', () => {
    // Everything that run found but in the README's examples (the next test's).
    expect(diagnostics(nodeNextTypes, 'readme-types.ts', 'besides')).toBe('');
  });

  it('the example signup service, compiled, runs on the installed package with plain node and exits 0 on SIGTERM', async () => {
    const url = await createPgDatabase(inject('pgAdminUrl'), uniqueDatabaseName('signups'));
    const child = spawn(process.execPath, [join('signup-service', 'main.js')], {
      cwd: project,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: url, PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: { msg?: string; url?: string }[] = [];
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let buffered = '';
    const listening = new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        const parts = buffered.split('\n');
        buffered = parts.pop() ?? '';
        for (const part of parts) {
          const line = JSON.parse(part) as { msg?: string; url?: string };
          lines.push(line);
          if (line.msg === 'signup service listening' && line.url) resolve(line.url);
        }
      });
      void exited.then((code) => reject(new Error(`the service exited with ${String(code)} before listening`)));
    });
    const base = await listening;
    const started = await fetch(`${base}/signups`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com', name: 'Ada' }),
    });
    expect(started.status).toBe(202);
    const { runId } = (await started.json()) as { runId: string };
    expect((await fetch(`${base}/signups/${runId}`)).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['migration', 'signup service stopped']));
  }, 200_000);

  // Review 52: the package as a new user meets it, with the README followed to the letter.
  const node = async (args: string[]) => {
    const { stdout } = await run(process.execPath, args, { cwd: project, env: outsideEnv(), timeout: 120_000 });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
  };

  it('installs on the oldest Node its engines field accepts (20.19.0) with engine-strict npm', async () => {
    // package.json says "engines": { "node": ">=20.19" }; every package it installs must say the same.
    expect(manifest().engines).toEqual({ node: '>=20.19' });
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

  it('the NATS transport without its optional peers installed says what to install (dependency_missing)', async () => {
    const r = (await node(['nats-missing.mjs'])) as {
      installed: boolean;
      refused: { class: string; code: string; details: unknown; message: string };
    };
    expect(r.installed).toBe(false);
    expect(r.refused).toMatchObject({
      class: 'EngineError',
      code: 'dependency_missing',
      details: { install: ['@nats-io/transport-node', '@nats-io/jetstream'] },
    });
    expect(r.refused.message).toContain('npm install @nats-io/transport-node@^3.4.0 @nats-io/jetstream@^3.4.0');
    expect(r.refused.message).toContain('Node 22');
  }, 60_000);

  it('importing both entry points adds no process signal or exit listeners (signal handling is the host’s)', async () => {
    expect(await node(['signals-on-import.mjs'])).toEqual({ added: {} });
  }, 60_000);

  it('a flow whose zod input fills a default is started without that field, as typed (tsc strict, NodeNext)', () => {
    // readme-types.ts: the README's examples as a user types them, checked in the NodeNext run above.
    expect(diagnostics(nodeNextTypes, 'readme-types.ts', 'of')).toBe('');
  });

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

  it('both entry points type-check under moduleResolution bundler, README shapes (tsc strict)', () => {
    expect(bundlerTypes).toBe('');
  });

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
