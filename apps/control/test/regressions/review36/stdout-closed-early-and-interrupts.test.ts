import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeControlPlane, trpcData, type FakeControlPlane } from './fake-control-plane.ts';
import { controlEntry } from '../../support/compiled-control.ts';

/**
 * An on-call person pipes a list into `head -1` or `less` and quits early. The CLI's stdout is then a pipe whose
 * reader is gone: the usual, quiet end of a command-line tool (as `git log | head -1`). What it must not do is
 * dump a Node stack trace ("Unhandled 'error' event … write EPIPE") onto the terminal and exit 1, which the
 * README's exit table reserves for "the control plane unreachable, not found, a server error". Ctrl-C while it
 * waits for an answer must end it at once.
 */
const root = fileURLToPath(new URL('../../../../../', import.meta.url));
const token = `sgf_${'C'.repeat(43)}`;
let fake: FakeControlPlane | null = null;
afterEach(async () => {
  await fake?.close();
  fake = null;
});

function spawnCli(args: string[], url: string) {
  return spawn(process.execPath, [...controlEntry('cli', 'build'), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SAGAFLOW_URL: url, SAGAFLOW_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe('the CLI when its reader goes away or it is interrupted', () => {
  it('stdout closed after the first line (| head -1): no stack trace on stderr, not exit 1', async () => {
    const catalogue: Record<string, unknown> = {};
    for (let i = 0; i < 2000; i++)
      catalogue[`run.k${i}`] = { target: 'run', destructive: false, adminOnly: false, description: 'd'.repeat(60) };
    fake = await startFakeControlPlane({ 'repairs.catalogue': trpcData(catalogue) });
    const child = spawnCli(['repairs'], fake.url);
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    // The reader takes the first chunk and goes, as `head -1` does.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect({ stackTrace: /Unhandled 'error' event|EPIPE|\n\s+at /.test(err), exit1: code === 1 }, err).toEqual({
      stackTrace: false,
      exit1: false,
    });
  });

  it('held: SIGINT while waiting for an answer ends it at once', async () => {
    let taken: () => void = () => undefined;
    const requestTaken = new Promise<void>((r) => (taken = r));
    fake = await startFakeControlPlane({ 'runs.page': () => taken() });
    const child = spawnCli(['runs', 'list'], fake.url);
    const closed = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal })),
    );
    await requestTaken;
    const sent = Date.now();
    child.kill('SIGINT');
    const end = await closed;
    expect(Date.now() - sent).toBeLessThan(10_000);
    expect(end.signal === 'SIGINT' || end.code === 130).toBe(true);
  });
});
