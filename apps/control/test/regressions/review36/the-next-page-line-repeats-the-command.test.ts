import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../support/run-cli.ts';
import { startFakeControlPlane, trpcData, type FakeControlPlane } from './fake-control-plane.ts';

/**
 * read-commands.ts:25-33: a list longer than its page ends with `next page: sagaflow <the same command line>
 * --cursor C` ("with the same command line and the cursor"). An on-call person pastes it into a shell. A filter
 * holding a space (a business key such as `order 42`, a state such as `Awaiting Payment`) must come out of the
 * shell as the same argument, or the next page is another query (or a usage error).
 */
const token = `sgf_${'D'.repeat(43)}`;
const page = {
  items: [
    {
      id: randomUUID(),
      flowName: 'demo.reservation',
      flowVersion: 1,
      status: 'Waiting',
      updatedAt: new Date().toISOString(),
      stuckReason: null,
      waitingFor: 'confirm',
    },
  ],
  nextCursor: 'eyJrIjoxfQ',
};
let fake: FakeControlPlane;
beforeAll(async () => {
  fake = await startFakeControlPlane({ 'runs.page': trpcData(page) });
});
afterAll(async () => {
  await fake.close();
});

/** The words a POSIX shell makes of `line`. */
function shellWords(line: string): string[] {
  const out = execFileSync('bash', ['-c', 'eval "set -- $1"; printf "%s\\0" "$@"', '_', line], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

describe('the "next page" line of a list', () => {
  it('held: a plain command line comes back as itself plus --cursor', async () => {
    const r = await runCli(['runs', 'list', '--status', 'Waiting', '--limit', '1'], {
      SAGAFLOW_URL: fake.url,
      SAGAFLOW_TOKEN: token,
    });
    const line = /next page: sagaflow (.*)$/m.exec(r.out)?.[1] ?? '';
    expect(shellWords(line)).toEqual([
      'runs',
      'list',
      '--status',
      'Waiting',
      '--limit',
      '1',
      '--cursor',
      page.nextCursor,
    ]);
  });

  it('a search holding a space, pasted into a shell, is the same search on the next page', async () => {
    const r = await runCli(['runs', 'list', '--search', 'order 42', '--limit', '1'], {
      SAGAFLOW_URL: fake.url,
      SAGAFLOW_TOKEN: token,
    });
    expect(r.code).toBe(0);
    const line = /next page: sagaflow (.*)$/m.exec(r.out)?.[1] ?? '';
    expect(shellWords(line)).toEqual([
      'runs',
      'list',
      '--search',
      'order 42',
      '--limit',
      '1',
      '--cursor',
      page.nextCursor,
    ]);
  });
});
