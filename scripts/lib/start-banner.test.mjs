import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { forwardWithoutGreeting, startBanner } from './start-banner.mjs';

const count = (text, part) => text.split(part).length - 1;

describe('npm start greets a newcomer once: the console address and the demo sign-in', () => {
  it('is a short banner naming the console URL and the sign-in once each', () => {
    const banner = startBanner({
      consoleUrl: 'http://127.0.0.1:3000',
      admin: { password: 's3cret-pass', file: '/repo/.data/demo-admin-password' },
      root: '/repo',
    });
    expect(banner.split('\n').filter((l) => l.trim()).length).toBeLessThanOrEqual(3);
    expect(count(banner, 'http://127.0.0.1:3000')).toBe(1);
    expect(banner).toContain('Sign in as admin with password s3cret-pass (kept in .data/demo-admin-password)');
    const fromEnv = startBanner({ consoleUrl: 'http://h:1', admin: { password: 'p', file: null }, root: '/repo' });
    expect(fromEnv).toContain('(from SAGAFLOW_ADMIN_PASSWORD)');
  });

  it("leaves out next start's own greeting (its name, the address twice, ready) from a real child's output, and nothing else", async () => {
    // The greeting as `next start` 16 prints it, then a line that must pass: a real error.
    const lines = [
      '▲ Next.js 16.4.6',
      '- Local:         http://127.0.0.1:3000',
      '- Network:       http://127.0.0.1:3000',
      '\u001b[32m\u001b[1m✓\u001b[22m\u001b[39m Ready in 782ms',
      '✓ Running next.config.ts took 325ms',
      'Error: connect ECONNREFUSED 127.0.0.1:4000',
    ];
    const child = spawn(process.execPath, ['-e', `console.log(${JSON.stringify(lines.join('\n'))})`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk) => (text += chunk.toString()));
    forwardWithoutGreeting(child.stdout, out);
    await new Promise((resolve) => child.on('close', resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(text).toBe('Error: connect ECONNREFUSED 127.0.0.1:4000\n');
  });
});
