import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

// Packs with npm, installs with npm into a project in the system's temp directory (outside the
// workspace: no links, no tsx, no catalog), then runs it with plain node. npm takes what its cache
// holds and asks the registry for the rest (CI has the registry). Slow by nature: one file, bounded.
describe('the packed engine, installed with plain npm into a project outside the workspace', () => {
  let project: string;
  let tarballFiles: string[];
  const manifest = () =>
    JSON.parse(readFileSync(join(project, 'node_modules', '@sagaflow', 'engine', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
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
    tarballFiles = info!.files.map((f) => f.path);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'host', private: true, type: 'module' }));
    for (const f of readdirSync(hostFiles)) cpSync(join(hostFiles, f), join(project, f));
    // The TypeScript host's own settings: strict, Node's ESM resolution, and the libraries' .d.ts checked too.
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
        files: ['host.ts'],
      }),
    );
    const catalog = catalogVersions();
    const pinned = ['@types/node', 'pino', 'zod'].map((name) => `${name}@${catalog.get(name)}`);
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', `./${info!.filename}`, ...pinned], {
      cwd: project,
      env,
      timeout: 300_000,
    });
    // The example service, compiled against the engine's build (its types from dist/) into the project.
    const outDir = join(project, 'signup-service');
    await run(process.execPath, [tsc, '-p', join(exampleService, 'tsconfig.build.json'), '--outDir', outDir], {
      env,
      timeout: 180_000,
    });
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

  it('a TypeScript host type-checks against the shipped .d.ts with tsc --noEmit --strict', async () => {
    const r = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], {
      cwd: project,
      env: outsideEnv(),
      timeout: 180_000,
    }).catch((err: Error & { stdout?: string }) => ({ stdout: err.stdout || err.message }));
    expect(r.stdout).toBe('');
  }, 200_000);

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
});
