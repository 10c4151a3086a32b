import { describe, expect, it } from 'vitest';
import { defineFlow } from '../../../src/index.ts';
import { bareEngine } from '../harness.ts';
import { useProxiedDatabase } from './cut-after-commit-proxy.ts';

/**
 * ADR 0047's fallback sends a failed batch's starts again one by one, on the ground that a failed
 * statement wrote nothing. A lost answer is not a refusal: the statement may have committed. Sent
 * again, a start without a business key was written twice (two runs for one call), and one with a
 * key got `duplicate_business_key` for the run its own batch had just written. A lone start meets
 * the same loss as the connection's error; so must each start of a batch.
 */
const flow = defineFlow({ name: 'answer-lost-start', version: 1, run: async () => null });

describe('a batch of starts whose answer is lost after the commit (PostgreSQL)', () => {
  const { direct, proxy, proxied } = useProxiedDatabase(4);

  const runsMarked = (mark: string) =>
    direct().prisma.$queryRaw<{ id: string; business_key: string | null }[]>`
      select id, business_key from "sagaflow"."flow_runs" where input->>'mark' = ${mark}`;

  /** Starts sent alone before the cut statement. */
  const lonesBeforeRound = 1;

  it('writes each start once, and gives no start the error of a key its own batch took', async () => {
    const e = bareEngine(proxied(), { flows: [flow], actions: [] });
    const cut = proxy().cutAfter((sent) => sent.includes('cutmark-b'));
    // The first goes alone at once; the two that arrive while it is out go together at the end of their
    // turn (ADR 0083), in the cut statement.
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: lonesBeforeRound }, (_, k) => e.startFlow(flow, { mark: `lone-${k}` })),
      e.startFlow(flow, { mark: 'cutmark-b' }, { businessKey: 'kb' }),
      e.startFlow(flow, { mark: 'cutmark-c' }),
    ]);
    const sent = await cut;
    expect(sent, 'the cut statement carried both starts (a batch)').toContain('cutmark-c');
    expect(outcomes.slice(0, lonesBeforeRound).map((o) => o.status)).toEqual(Array(lonesBeforeRound).fill('fulfilled'));

    const fates = [];
    for (const [n, mark] of [
      [lonesBeforeRound, 'cutmark-b'],
      [lonesBeforeRound + 1, 'cutmark-c'],
    ] as const) {
      const outcome = outcomes[n]!;
      const runs = await runsMarked(mark);
      fates.push({
        mark,
        runs: runs.length,
        // A start told it succeeded is told the run that was written.
        runIdWritten: outcome.status === 'rejected' || outcome.value.runId === runs[0]?.id,
        duplicateKeyError:
          outcome.status === 'rejected' && (outcome.reason as { code?: unknown }).code === 'duplicate_business_key',
      });
    }
    // Each run written once, by the batch that committed; no start refused for its own key.
    expect(fates).toEqual(
      ['cutmark-b', 'cutmark-c'].map((mark) => ({ mark, runs: 1, runIdWritten: true, duplicateKeyError: false })),
    );
  });
});
