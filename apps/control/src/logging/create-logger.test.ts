import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const sample = fileURLToPath(new URL('../../test/support/log-sample.ts', import.meta.url));
const cwd = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The sample's stdout, with stdout a pipe, or a terminal (a pseudo-terminal from util-linux `script`).
 * The clean environment carries no export condition: the child asks for the engine's sources itself.
 */
function logOutput(env: Record<string, string>, terminal = false): string {
  const childEnv = { PATH: process.env.PATH ?? '', ...env };
  const node = [process.execPath, '--conditions=@sagaflow/source', '--import', 'tsx', sample];
  if (!terminal) return execFileSync(node[0] ?? '', node.slice(1), { cwd, env: childEnv, encoding: 'utf8' });
  const command = node.map((a) => `'${a}'`).join(' ');
  return execFileSync('script', ['-qec', command, '/dev/null'], { cwd, env: childEnv, encoding: 'utf8' });
}

const lines = (out: string) => out.split(/\r?\n/).filter((l) => l.trim() !== '');
// eslint-disable-next-line no-control-regex
const plain = (line: string) => line.replace(/\u001b\[[0-9;]*m/g, '');

describe('the control plane logger: JSON for collectors, readable lines for people, expected demo events quiet', () => {
  it('writes one JSON object per line when stdout is not a terminal', () => {
    const records = lines(logOutput({})).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => r.msg)).toEqual([
      'control plane listening',
      'process instance quarantined',
      'outbox publish failed',
    ]);
    // The demo's poison note is expected: info, its message only, no stack. A real failure keeps both.
    expect(records[1]).toMatchObject({ level: 30, expected: 'PoisonNoteError: cannot handle note "poison"' });
    expect(records[1]).not.toHaveProperty('err');
    expect(records[2]).toMatchObject({ level: 40, err: { message: 'disk full' } });
    expect((records[2]?.err as { stack?: string }).stack).toContain('Error: disk full');
  });

  it('writes human-readable lines on a terminal, and JSON there too with LOG_FORMAT=json or in production', () => {
    const readable = lines(logOutput({}, true)).map(plain);
    expect(readable[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\] INFO: control plane listening \{"url":"http:\/\/127\.0\.0\.1:4000"\}$/,
    );
    expect(readable[1]).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: process instance quarantined .*PoisonNoteError/);
    expect(readable.join('\n')).not.toMatch(/at .*order-fulfilment\.ts/);
    // A real failure keeps its stack in the readable form too.
    expect(readable.some((l) => /^\[\d\d:\d\d:\d\d\] WARN: outbox publish failed/.test(l))).toBe(true);
    expect(readable.join('\n')).toMatch(/Error: disk full\n\s+at /);
    for (const env of [{ LOG_FORMAT: 'json' }, { NODE_ENV: 'production' }] as Record<string, string>[]) {
      const out = lines(logOutput(env, true));
      expect(out.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain('control plane listening');
    }
  });

  it('writes human-readable lines with LOG_FORMAT=pretty even into a pipe', () => {
    const out = lines(logOutput({ LOG_FORMAT: 'pretty' }));
    expect(out[0]).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: control plane listening/);
    expect(() => JSON.parse(out[0] ?? '') as unknown).toThrow();
  });
});
