import type { Json } from '../definitions/define-action.ts';
import { EngineError } from '../errors/engine-error.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { insertFlowRun } from '../store/insert-flow-run.ts';

export interface StartFlowOptions {
  /** A business identity; starting a second run of the same flow with it is rejected (reject-duplicate). */
  businessKey?: string;
  tags?: string[];
  /** The business deadline of the whole run (expires_at), enforced by the monitor; default monitor.expiration.defaults.run. */
  expiresInSeconds?: number;
  /** The engine's backstop: past it the run is closed as TimedOut, without compensation. */
  runTimeoutSeconds?: number;
}

export async function startFlow(
  deps: RuntimeDeps,
  name: string,
  input: Json,
  opts: StartFlowOptions,
): Promise<{ runId: string }> {
  const flow = deps.registry.flows.get(name);
  if (!flow) throw new EngineError('unknown_flow', `no flow named "${name}" is registered`);
  for (const [key, v] of [
    ['expiresInSeconds', opts.expiresInSeconds],
    ['runTimeoutSeconds', opts.runTimeoutSeconds],
  ] as const) {
    if (v !== undefined && !(Number.isFinite(v) && v > 0))
      throw new EngineError('invalid_input', `${key} must be a positive number of seconds, got ${String(v)}`);
  }
  const now = deps.clock.now();
  const timeout = opts.runTimeoutSeconds ?? deps.config.runs.default_timeout_seconds ?? undefined;
  const expiresIn = opts.expiresInSeconds ?? deps.config.monitor.expiration.defaults.run;
  const runTimeoutAt = timeout === undefined ? null : new Date(now.getTime() + timeout * 1000);
  try {
    const runId = await deps.prisma.$transaction(async (tx) => {
      const id = await insertFlowRun(tx, {
        flowName: flow.name,
        flowVersion: flow.version,
        input,
        businessKey: opts.businessKey ?? null,
        tags: opts.tags ?? [],
        expiresAt: expiresIn === null ? null : new Date(now.getTime() + expiresIn * 1000),
        runTimeoutAt,
        now,
      });
      await appendFlowEvent(tx, { runId: id, type: 'run.started', data: { flow: flow.name, version: flow.version } });
      await enqueueJob(tx, { kind: 'wake-run', runId: id, availableAt: now });
      if (runTimeoutAt) await enqueueJob(tx, { kind: 'wake-run', runId: id, availableAt: runTimeoutAt });
      return id;
    });
    return { runId };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'P2002' || /unique constraint|duplicate key/i.test(e.message ?? '')) {
      throw new EngineError(
        'duplicate_business_key',
        `a run of "${name}" with business key "${opts.businessKey ?? ''}" already exists`,
        { cause: err },
      );
    }
    throw err;
  }
}
