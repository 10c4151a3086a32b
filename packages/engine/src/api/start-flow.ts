import type { Json } from '../definitions/define-action.ts';
import { EngineError } from '../errors/engine-error.ts';
import { assertSeconds } from '../input/assert-seconds.ts';
import { assertStorableJson } from '../input/assert-storable-json.ts';
import { assertStorableText } from '../input/assert-storable-text.ts';
import { jsonRules, textRules } from '../input/input-limits.ts';
import { checkedFlowInput } from '../input/checked-flow-input.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { insertStartedRun, startedLease, type StartedRun } from '../store/insert-started-run.ts';
import { startInBatch } from './start-in-batch.ts';
import { startWithFirstStep, type StartedFlow } from './start-with-first-step.ts';

export interface StartFlowOptions {
  /** A business identity; starting a second run of the same flow with it is rejected (reject-duplicate). */
  businessKey?: string;
  tags?: string[];
  /** The business deadline of the whole run (expires_at), enforced by the monitor; default monitor.expiration.defaults.run. */
  expiresInSeconds?: number;
  /** The engine's backstop: past it the run is closed as TimedOut, without compensation. */
  runTimeoutSeconds?: number;
}

/** The most tags one run may carry. */
const maxTags = 100;

/** Everything a start would store, checked before the transaction opens (ADR 0013). */
function checkStartFlow(deps: RuntimeDeps, input: unknown, opts: StartFlowOptions): void {
  const limits = deps.config.limits;
  assertStorableJson(input, 'input', jsonRules(limits, 'flow_input_bytes'));
  if (opts.businessKey !== undefined) assertStorableText(opts.businessKey, 'businessKey', textRules(limits));
  if (opts.tags !== undefined) {
    if (!Array.isArray(opts.tags))
      throw new EngineError('invalid_input', 'tags: must be an array of strings', { field: 'tags' });
    if (opts.tags.length > maxTags)
      throw new EngineError('invalid_input', `tags: ${opts.tags.length} tags, more than the limit of ${maxTags}`, {
        field: 'tags',
      });
    opts.tags.forEach((tag, i) => assertStorableText(tag, `tags[${i}]`, textRules(limits)));
  }
  if (opts.expiresInSeconds !== undefined) assertSeconds(opts.expiresInSeconds, 'expiresInSeconds');
  if (opts.runTimeoutSeconds !== undefined) assertSeconds(opts.runTimeoutSeconds, 'runTimeoutSeconds');
}

/**
 * Stores a new run with its history row and its first wake, all or nothing, sent through the driver
 * (prepared by name, ADR 0043) in one statement with the other starts waiting at that moment
 * (ADR 0047), unless `deps` has no driver, as in a host's transaction: there it goes alone through
 * the host's Prisma transaction. With `leaseToSelf` (this process's pool has a slot reserved for it)
 * the wake is written already leased to this worker and returned, for the pool to run at once (ADR 0029),
 * and, when the run's first durable write is a new action step, that step goes with the start, claimed
 * by this worker, in the same statement (ADR 0048).
 */
export async function startFlow(
  deps: RuntimeDeps,
  name: string,
  input: Json,
  opts: StartFlowOptions,
  leaseToSelf = false,
): Promise<StartedFlow> {
  const flow = deps.registry.flows.get(name);
  if (!flow)
    throw new EngineError('unknown_flow', `flowName: no flow named ${JSON.stringify(name)} is registered`, {
      field: 'flowName',
    });
  checkStartFlow(deps, input, opts);
  input = await checkedFlowInput(deps.config.limits, flow.schemas.input, input);
  const now = deps.clock.now();
  const timeout = opts.runTimeoutSeconds ?? deps.config.runs.default_timeout_seconds ?? undefined;
  const expiresIn = opts.expiresInSeconds ?? deps.config.monitor.expiration.defaults.run;
  const runTimeoutAt = timeout === undefined ? null : new Date(now.getTime() + timeout * 1000);
  const run: StartedRun = {
    flowName: flow.name,
    flowVersion: flow.version,
    input,
    businessKey: opts.businessKey ?? null,
    tags: opts.tags ?? [],
    expiresAt: expiresIn === null ? null : new Date(now.getTime() + expiresIn * 1000),
    runTimeoutAt,
    now,
    lease: leaseToSelf ? { workerId: deps.workerId, leaseSeconds: deps.config.worker.lease_seconds } : null,
  };
  const { driver } = deps;
  try {
    if (!driver) return await insertStartedRun(deps.prisma, run);
    // Handed to this process's pool and written active: the first step may go with the start (ADR 0048).
    if (startedLease(run).active) return await startWithFirstStep({ ...deps, driver }, flow, run);
    return await startInBatch(driver, run);
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'P2002' || e.code === '23505' || /unique constraint|duplicate key/i.test(e.message ?? '')) {
      throw new EngineError(
        'duplicate_business_key',
        `a run of "${name}" with business key "${opts.businessKey ?? ''}" already exists`,
        { cause: err },
      );
    }
    throw err;
  }
}
