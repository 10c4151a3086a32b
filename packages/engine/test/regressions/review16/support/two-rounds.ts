import { expect } from 'vitest';
import type { Database } from '../../../../src/db/database.ts';
import { defineFlow } from '../../../../src/index.ts';
import type { FusableDeps } from '../../../../src/runtime/replay/fused-outcome.ts';
import { roundLimits, transitionInBatch } from '../../../../src/runtime/run-statement-batches.ts';
import type { TransitionResult } from '../../../../src/store/step-transitions.ts';
import { activeRun } from '../../../support/active-run.ts';
import { holdRuns, waitForWaiters, type HeldRows } from '../../../support/held-rows.ts';
import { stepClaim } from '../../../support/round-items.ts';
import type { watchSends } from '../../../support/sends-in-flight.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { bareEngine } from '../../harness.ts';

export const worker = 'review16-worker';
export const flowName = 'review16-rounds';
const flow = defineFlow({ name: flowName, version: 1, run: async () => null });

/** A bare engine's runtime on `handle`: the deps a replay submits its transitions and finishes with. */
export const engineOn = (handle: Database, config: { transaction_wait_ms?: number } = {}) =>
  bareEngine(handle, { flows: [flow], actions: [], config: { worker: { ...config } } }).runtime as FusableDeps;

/** The statements the batcher may have out at most: every slot, each slow (ADR 0045, 0076). */
export const allSlots = roundLimits.maxInFlight;

/**
 * Every slot of `watched`'s batcher taken by a lone claim held on its run's row by a transaction of its
 * own (one holder per slot, so each can be let go alone): each claim goes once the ones before it are
 * slow, as the rule lets it. Afterwards whatever is submitted waits, and the items waiting when a
 * holder lets go go out together as ONE round in the slot it frees.
 */
export async function fillSlots(
  db: Database & { url?: string },
  watched: ReturnType<typeof watchSends>,
  deps: FusableDeps,
  prefix: string,
): Promise<{ holders: HeldRows[]; claims: Promise<TransitionResult>[] }> {
  const holders: HeldRows[] = [];
  const claims: Promise<TransitionResult>[] = [];
  for (let k = 0; k < allSlots; k++) {
    const lone = await activeRun(db, `${prefix}-lone-${k}`, worker);
    const holder = await holdRuns(db.url!, [lone]);
    holders.push(holder);
    claims.push(transitionInBatch(deps, stepClaim(worker, lone, 1)));
    await waitFor(`lone claim ${k} to go out`, async () => (watched.out().length === k + 1 ? true : undefined));
    await waitForWaiters(db, holder.pid);
  }
  expect(watched.sends.every((s) => !s.round)).toBe(true);
  return { holders, claims };
}

/** Lets go of `holder` and waits for the round its slot then sends: the `n` of that send. */
export async function letGoForRound(watched: ReturnType<typeof watchSends>, holder: HeldRows): Promise<number> {
  const before = watched.sends.length;
  await holder.commit();
  return waitFor('a round to go in the freed slot', async () => {
    const next = watched.sends.slice(before).find((s) => s.round);
    return next?.n;
  });
}

/** Settles as `p` does and records when it did. */
export function tracked<T>(p: Promise<T>): { promise: Promise<PromiseSettledResult<T>>; settled: () => boolean } {
  let done = false;
  const promise = Promise.allSettled([p]).then(([r]) => {
    done = true;
    return r;
  });
  return { promise, settled: () => done };
}

/** An active run of the test's flow, leased to the test's worker: its id. */
export const runOf = (db: Database, name: string) => activeRun(db, name, worker);

/** Active runs named `<prefix>-<name>`, one per name: their ids, in the names' order. */
export const runsNamed = <const N extends readonly string[]>(
  db: Database,
  prefix: string,
  names: N,
): Promise<{ [K in keyof N]: string }> =>
  Promise.all(names.map((name) => runOf(db, `${prefix}-${name}`))) as Promise<{ [K in keyof N]: string }>;
