import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import type { Database, Engine } from '../../src/index.ts';
import { compiledEngineScript, compiledEnv } from './compiled.ts';
import { openTestDatabase } from './test-database.ts';
import { waitFor } from './wait-for.ts';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/** A child worker process a test started (its script built on `child-worker-main.ts`) and may SIGKILL. */
export interface ChildWorker {
  readonly proc: ChildProcess;
  /** The worker id it printed with `ready <worker id>`. */
  readonly workerId: string;
  /** Everything it printed on stdout so far. */
  output(): string;
  /** Resolves with the first match of `re` in what it printed, now or later (progress-driven, `ms` at most). */
  printed(re: RegExp, ms?: number): Promise<RegExpExecArray>;
  /** Writes one line to its stdin (a script waiting on `linesFromTest` goes on). */
  say(line?: string): void;
  /** SIGKILLs it; resolves with the signal it died of once it has exited. */
  kill(): Promise<NodeJS.Signals | null>;
}

/**
 * Starts a child worker process (`script` with `url` and `args` as its arguments, stdin and stdout piped)
 * and resolves once it prints `ready <worker id>`: a real process a test can SIGKILL. `onSpawn` gets the
 * process at once, so the caller can kill it even if it never gets ready. A script of the engine runs
 * compiled, from this run's build (support/compiled.ts), with plain node; `from: 'sources'` runs `script`
 * through tsx instead (a script outside the engine, e.g. an older release's sources).
 */
export function spawnWorker(
  script: string,
  url: string,
  onSpawn: (proc: ChildProcess) => void = () => undefined,
  args: readonly string[] = [],
  from: 'build' | 'sources' = 'build',
): Promise<ChildWorker> {
  const entry = from === 'build' ? [compiledEngineScript(script)] : ['--import', 'tsx', script];
  const proc = spawn(process.execPath, [...entry, url, ...args], {
    cwd: repoRoot,
    env: from === 'build' ? compiledEnv() : process.env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  onSpawn(proc);
  let out = '';
  const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.once('exit', (_code, signal) => resolve(signal)));
  return new Promise((resolve, reject) => {
    const child = (workerId: string): ChildWorker => ({
      proc,
      workerId,
      output: () => out,
      printed: (re, ms) => waitFor(`the child worker to print ${re}`, async () => re.exec(out) ?? undefined, ms),
      say: (line = 'go') => void proc.stdin?.write(`${line}\n`),
      kill: () => {
        proc.kill('SIGKILL');
        return exited;
      },
    });
    proc.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /^ready (\S+)\n/m.exec(out);
      if (m?.[1]) resolve(child(m[1]));
    });
    proc.once('exit', (code, signal) =>
      reject(new Error(`the child worker exited before it was ready (code ${code}, signal ${signal})`)),
    );
  });
}

/**
 * What a describe block that kills real worker processes shares: a test database opened before its tests
 * (PostgreSQL: the children need its URL), and after them every child SIGKILLed, every engine it adopted
 * stopped and its other resources closed, then the database closed.
 */
export function childWorkerSuite() {
  let db: (Database & { url?: string }) | undefined;
  const children = new Set<ChildProcess>();
  const engines: Engine[] = [];
  const closers: (() => Promise<void> | void)[] = [];
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    for (const e of engines) {
      await e.stopMonitor();
      await e.stopWorkers(2000);
    }
    for (const close of closers) await close();
    await db?.close();
  });
  const opened = () => {
    if (!db) throw new Error('the test database is opened in beforeAll');
    return db;
  };
  return {
    get db(): Database & { url?: string } {
      return opened();
    },
    /** The database's URL, which a child needs: only the PostgreSQL project has one. */
    get url(): string {
      const { url } = opened();
      if (!url) throw new Error('this test needs the PostgreSQL project (a database URL for the child)');
      return url;
    },
    /** Starts `script` on `url` (the database's by default) as a child worker this suite kills at its end. */
    spawn(script: string, opts: { url?: string; args?: readonly string[] } = {}): Promise<ChildWorker> {
      return spawnWorker(script, opts.url ?? this.url, (p) => children.add(p), opts.args);
    },
    /** An engine of this process the suite stops at its end (monitor and workers). */
    adopt<E extends Engine>(engine: E): E {
      engines.push(engine);
      return engine;
    },
    /** Something else to close at the end, after the engines and before the database. */
    onClose(close: () => Promise<void> | void) {
      closers.push(close);
    },
  };
}
