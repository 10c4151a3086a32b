import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/run-cli.ts';

/**
 * ADR 0021: the token "is returned once by tokens.create and never stored, logged or audited"; the engine
 * masks a DATABASE_URL's password before it prints one (packages/engine/src/db/create-database.ts:251-254,
 * `postgresql://x:***@…`, as `monitor sweep` shows it). SAGAFLOW_URL is "the control plane http(s) URL"
 * (cli-settings.ts:10); a deployment behind a proxy with basic auth writes it as https://user:password@host.
 * Whatever the CLI does with such a URL, an error it prints (to a terminal, a CI log) must not carry the password.
 */
describe('a SAGAFLOW_URL holding a password', () => {
  it('an error naming the control plane does not print the password', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const { port } = s.address() as { port: number };
    await new Promise<void>((r) => s.close(() => r()));
    const r = await runCli(['runs', 'list', '--json'], {
      SAGAFLOW_URL: `http://ops:hunter2-proxy-secret@127.0.0.1:${port}`,
      SAGAFLOW_TOKEN: `sgf_${'B'.repeat(43)}`,
    });
    expect(r.code).toBe(1);
    expect(r.out + r.err).not.toContain('hunter2-proxy-secret');
    expect(r.out + r.err).not.toContain('B'.repeat(20));
  });
});
