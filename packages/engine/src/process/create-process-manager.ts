import { assertInteger } from '../input/assert-integer.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import type { Database } from '../db/database.ts';
import { withHostTransaction, type HostTransaction } from '../db/host-transaction.ts';
import { EngineError } from '../errors/engine-error.ts';
import { defaultInputLimits, type InputLimits } from '../input/input-limits.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';
import { parseEngineConfig, type EngineConfig, type EngineConfigInput } from '../runtime/engine-config.ts';
import type { ProcessDefinition } from './define-process.ts';
import { deliverMessage } from './deliver-message.ts';
import type { DeliverResult } from './deliver-in-transaction.ts';
import { findInstance, findInstancesByStatus } from './find-instances.ts';
import { instanceHistory, type InstanceTransition } from './instance-history.ts';
import type { InstanceStatus, ProcessInstance } from './instance-view.ts';
import type { IncomingMessage } from './parse-message.ts';
import { previewOperatorCommand, type OperatorCommandPreview } from './preview-operator-command.ts';
import type { ProcessDeps, ProcessFaults } from './process-deps.ts';
import { releaseInstance, type ReleaseOptions, type ReleaseResult } from './release-instance.ts';
import { runOperatorCommand, type OperatorCommand, type OperatorCommandResult } from './run-operator-command.ts';
import { startTimeoutScheduler, type TimeoutScheduler } from './start-timeout-scheduler.ts';
import { noStoreRetry } from './store-retry.ts';
import { sweepProcessTimeouts } from './sweep-process-timeouts.ts';
import { createSweepProgress, type SweepProgress } from '../sweeps/sweep-progress.ts';

export interface ProcessManagerOptions {
  db: Database;
  processes: readonly ProcessDefinition[];
  /** The `processes` section of the engine config (quarantine budget, store retries). */
  config?: EngineConfigInput['processes'];
  /** The `limits` section of the engine config (payload sizes, text lengths). */
  limits?: EngineConfigInput['limits'];
  clock?: Clock;
  logger?: Logger;
  /** @internal Test-kit fault injection. */
  faults?: ProcessFaults;
  /** @internal How store retries wait (tests pass a recorder). */
  sleep?: (ms: number) => Promise<unknown>;
}

export interface DeliverOptions {
  /** The host's open transaction to deliver in (see `ProcessManager.deliver`). */
  tx?: HostTransaction;
}

export interface ProcessManager {
  readonly definitions: ReadonlyMap<string, ProcessDefinition>;
  /**
   * Delivers one message in one transaction; see {@link deliverMessage}. With `tx` (the host's open
   * transaction, as for `startFlow`), that transaction is a savepoint of the host's: the delivery,
   * its outbox rows and its inbox record commit if and only if the host's transaction does, and a
   * failing transition is not retried here (the host's transaction decides).
   */
  deliver(
    process: string | ProcessDefinition,
    message: IncomingMessage,
    options?: DeliverOptions,
  ): Promise<DeliverResult>;
  /**
   * Delivers a message to the one registered process that accepts its type. A type no process
   * accepts, or one several accept (name the process then), is refused before any write.
   */
  deliver(message: IncomingMessage, options?: DeliverOptions): Promise<DeliverResult>;
  /** One pass of the timeout scheduler over due timeouts. */
  sweepProcessTimeouts(options?: { limit?: number }): Promise<{ delivered: number; failed: number }>;
  startTimeoutScheduler(options?: { intervalMs?: number }): void;
  stopTimeoutScheduler(): Promise<void>;
  find(instanceId: string): Promise<ProcessInstance | null>;
  /**
   * A window of the instance's transition history, oldest first: its newest `limit` rows (default
   * 500), those just before the id `before`, or those just after the id `after` (ADR 0035).
   */
  history(
    instanceId: string,
    options?: { limit?: number; before?: string; after?: string },
  ): Promise<{ transitions: InstanceTransition[]; truncated: boolean }>;
  findByStatus(
    status: InstanceStatus,
    updatedBefore: Date,
    limit: number,
    options?: { processName?: string },
  ): Promise<ProcessInstance[]>;
  runOperatorCommand(
    process: string | ProcessDefinition,
    instanceId: string,
    command: OperatorCommand,
  ): Promise<OperatorCommandResult>;
  /** What `runOperatorCommand` would do now, without writing. */
  previewOperatorCommand(
    process: string | ProcessDefinition,
    instanceId: string,
    command: OperatorCommand,
  ): Promise<OperatorCommandPreview>;
  release(instanceId: string, options: ReleaseOptions): Promise<ReleaseResult>;
  /** @internal What the manager's operations run on (the engine's repairs use it). */
  readonly deps: ProcessDeps;
}

/** @internal Builds the manager from an already parsed config (createEngine's path). */
export function buildProcessManager(
  options: Omit<ProcessManagerOptions, 'config' | 'limits'> & {
    config: EngineConfig['processes'];
    limits?: InputLimits;
    /** The engine's sweep settings and progress book; a standalone manager gets its own. */
    sweeps?: { config: EngineConfig['sweeps']; progress: SweepProgress };
  },
): ProcessManager {
  const definitions = new Map<string, ProcessDefinition>();
  for (const def of options.processes) {
    if (definitions.has(def.name))
      throw new EngineError('invalid_definition', `process "${def.name}" is registered twice`);
    definitions.set(def.name, def);
  }
  const c = options.config;
  const deps: ProcessDeps = {
    prisma: options.db.prisma,
    definitions,
    clock: options.clock ?? systemClock,
    logger: options.logger ?? pino({ name: 'sagaflow' }),
    quarantineAfterMs: c.quarantine_after_seconds === undefined ? null : c.quarantine_after_seconds * 1000,
    storeRetry: {
      maxAttempts: c.store_retry.max_attempts,
      baseDelayMs: c.store_retry.base_delay_ms,
      maxDelayMs: c.store_retry.max_delay_ms,
    },
    limits: options.limits ?? defaultInputLimits,
    timeoutRetryMs: c.timeout_retry_seconds * 1000,
    timeoutRetryMaxMs: c.timeout_retry_max_seconds * 1000,
    transactionTimeoutMs: c.transaction_timeout_ms,
    sweepBudgetMs: (options.sweeps?.config ?? parseEngineConfig({}).sweeps).pass_budget_ms,
    progress: options.sweeps?.progress ?? createSweepProgress(),
    faults: options.faults ?? {},
    sleep: options.sleep ?? ((ms) => sleep(ms)),
  };
  let scheduler: TimeoutScheduler | null = null;
  return {
    definitions,
    deps,
    deliver: async (
      first: string | ProcessDefinition | IncomingMessage,
      second?: IncomingMessage | DeliverOptions,
      third?: DeliverOptions,
    ) => {
      const named = typeof first === 'string' || (first as ProcessDefinition).kind === 'process';
      const [process, message, { tx } = {}] = named
        ? [first as string | ProcessDefinition, second as IncomingMessage, third]
        : [processFor(definitions, first), first as IncomingMessage, second as DeliverOptions | undefined];
      if (!tx) return deliverMessage(deps, process, message);
      return withHostTransaction(options.db, tx, (prisma) =>
        deliverMessage(
          { ...deps, prisma, storeRetry: noStoreRetry, inHostTransaction: true, journal: deps.prisma },
          process,
          message,
        ),
      );
    },
    async sweepProcessTimeouts(opts) {
      const { delivered, failed } = await sweepProcessTimeouts(deps, opts);
      return { delivered, failed };
    },
    startTimeoutScheduler(opts = {}) {
      const intervalMs =
        opts.intervalMs === undefined ? 1000 : assertInteger(opts.intervalMs, 'intervalMs', 1, 3_600_000);
      scheduler ??= startTimeoutScheduler(deps, { intervalMs });
    },
    async stopTimeoutScheduler() {
      const s = scheduler;
      scheduler = null;
      await s?.stop();
    },
    find: (id) => findInstance(deps, id),
    history: (id, opts) => instanceHistory(deps, id, opts),
    findByStatus: (status, updatedBefore, limit, opts) =>
      findInstancesByStatus(deps, status, updatedBefore, limit, opts),
    runOperatorCommand: (process, id, cmd) => runOperatorCommand(deps, process, id, cmd),
    previewOperatorCommand: (process, id, cmd) => previewOperatorCommand(deps, process, id, cmd),
    release: (id, opts) => releaseInstance(deps, id, opts),
  };
}

/**
 * Process managers over a database handle the host built: deliver messages, run the timeout
 * scheduler, inspect instances, repair them. Config is parsed here and refused with the key named.
 *
 * @example
 * const pm = createProcessManager({ db, processes: [fulfilment], config: { quarantine_after_seconds: 300 } });
 * await pm.deliver('order-fulfilment', { id: 'evt-1', type: 'PaymentCaptured', payload: { orderId: 'o-1', paymentId: 'p-1' } });
 * pm.startTimeoutScheduler();
 */
export function createProcessManager(options: ProcessManagerOptions): ProcessManager {
  const parsed = parseEngineConfig({ processes: options.config ?? {}, limits: options.limits ?? {} });
  return buildProcessManager({ ...options, config: parsed.processes, limits: parsed.limits });
}

/** The one registered process whose messages include this message's type. */
function processFor(definitions: ReadonlyMap<string, ProcessDefinition>, message: unknown): ProcessDefinition {
  const type = typeof message === 'object' && message !== null ? (message as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || type === '')
    throw new EngineError('invalid_input', 'message.type is required (or name the process: deliver(process, message))');
  const accepting = [...definitions.values()].filter((d) => Object.hasOwn(d.messages, type));
  const [only, ...others] = accepting;
  if (!only) throw new EngineError('invalid_input', `message.type: no registered process accepts "${type}"`);
  if (others.length > 0)
    throw new EngineError(
      'invalid_input',
      `message.type: "${type}" is accepted by ${accepting.map((d) => d.name).join(', ')}; name the process: deliver(process, message)`,
    );
  return only;
}
