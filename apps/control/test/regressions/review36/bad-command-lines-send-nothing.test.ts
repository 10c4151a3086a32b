import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../support/run-cli.ts';
import { kickCatalogue, startFakeControlPlane, trpcData, type FakeControlPlane } from './fake-control-plane.ts';

/**
 * README "Operator CLI" / usage.ts: exit 64 is "usage: a bad command line"; parse-cli-args.ts says an unknown
 * option "is a usage error naming it". A bad command line must send nothing: a recording HTTP server stands in
 * for the control plane and must see no request. A repair command line that names two different steps, two
 * reasons or two idempotency keys is as ambiguous as a missing one: which one was meant is a guess.
 */
const run = randomUUID();
const token = `sgf_${'A'.repeat(43)}`;
let fake: FakeControlPlane;
beforeAll(async () => {
  fake = await startFakeControlPlane({
    'repairs.catalogue': trpcData({
      ...kickCatalogue,
      'run.retry_step': { target: 'step', destructive: false, adminOnly: false, description: 'retry' },
    }),
  });
});
afterAll(async () => {
  await fake.close();
});

async function refused(args: string[]) {
  fake.requests.length = 0;
  const r = await runCli(args, { SAGAFLOW_URL: fake.url, SAGAFLOW_TOKEN: token });
  return { code: r.code, err: r.err, out: r.out, sent: fake.requests.map((q) => q.path) };
}

describe('a bad command line', () => {
  it.each([
    ['an unknown option', ['kick', run, '--reason', 'x', '--force'], /--force/],
    ['an option of another command', ['kick', run, '--reason', 'x', '--step', '2'], /kick does not take --step/],
    ['a missing value', ['kick', run, '--reason'], /--reason/],
    ['a step that is not a number', ['retry', run, '--step', 'two', '--reason', 'x'], /--step must be a whole number/],
    ['a step of 0', ['retry', run, '--step', '0', '--reason', 'x'], /--step must be a whole number from 1/],
    ['a run id that is not a UUID', ['kick', 'abc', '--reason', 'x'], /run-id must be a run's UUID, got "abc"/],
    ['no reason', ['kick', run], /needs --reason/],
    ['a blank reason', ['kick', run, '--reason', '   '], /needs --reason/],
    ['a limit that is not a number', ['runs', 'list', '--limit', '1e3'], /--limit must be a whole number/],
    ['an extra positional', ['run', 'show', run, 'extra'], /unexpected extra/],
    ['--json given a value', ['runs', 'list', '--json=1'], /--json/],
    ['an unknown command', ['kik', run], /unknown command "kik/],
    ['a bad --order', ['runs', 'list', '--order', 'oldest'], /--order must be newest or stalest/],
    ['bad JSON', ['signal', run, 'confirm', '--payload', '{a', '--reason', 'x'], /--payload must be JSON/],
  ])('held: %s is exit 64 naming it, and nothing is sent', async (_label, args, says) => {
    const r = await refused(args);
    expect({ code: r.code, sent: r.sent, out: r.out }).toEqual({ code: 64, sent: [], out: '' });
    expect(r.err).toMatch(says);
  });

  it('held: after --, a dash-led value is a positional (an id), so it is refused as a bad run id', async () => {
    const r = await refused(['kick', '--reason', 'x', '--', '-abc']);
    expect({ code: r.code, sent: r.sent }).toEqual({ code: 64, sent: [] });
    expect(r.err).toMatch(/run-id must be a run's UUID, got "-abc"/);
  });

  it.each([
    ['two steps', ['retry', run, '--step', '1', '--step', '2', '--reason', 'x', '--expect-status', 'Running'], 'step'],
    [
      'two reasons',
      ['kick', run, '--reason', 'deployed fix', '--reason', 'oops', '--expect-status', 'Waiting'],
      'reason',
    ],
    [
      'two idempotency keys',
      [
        'kick',
        run,
        '--reason',
        'x',
        '--idempotency-key',
        'k1',
        '--idempotency-key',
        'k2',
        '--expect-status',
        'Waiting',
      ],
      'idempotency-key',
    ],
  ])('a repair naming %s is exit 64 naming the option, and nothing is sent', async (_label, args, option) => {
    const r = await refused(args);
    expect({ code: r.code, sent: r.sent }).toEqual({ code: 64, sent: [] });
    expect(r.err).toContain(`--${option}`);
  });
});
