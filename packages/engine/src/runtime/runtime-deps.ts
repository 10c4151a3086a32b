import type { HandedOverRun } from '../store/insert-started-run.ts';
import type { HeldReplay } from './replay/probe-first-step.ts';
import type { Logger } from 'pino';
import type { SqlDriver } from '../db/database.ts';
import type { Prisma, PrismaClient } from '../generated/prisma/client.ts';
import type { Anomaly } from '../store/insert-anomaly.ts';
import type { StepTable } from '../store/step-table.ts';
import type { SweepProgress } from '../sweeps/sweep-progress.ts';
import type { Clock } from './clock.ts';
import type { EngineConfig } from './engine-config.ts';
import type { EmitEvent } from './engine-events.ts';
import type { HeldOutcomes } from './held-outcomes.ts';
import type { Registry } from './registry.ts';

export interface ClaimedStep {
  table: StepTable;
  runId: string;
  rowId: string;
  sequence: number;
  name: string;
  attempt: number;
}

/**
 * Code that runs inside the engine's own transactions. A listener that writes in the claim's
 * transaction (an outbox row, an audit row) belongs here; so does a test's fault.
 */
export interface TransactionalHooks {
  /**
   * Inside the claim's transaction, after the claim statement. Installing it sends every run
   * transaction through Prisma's `$transaction` (the hook takes a Prisma transaction) instead of the
   * driver's prepared statements, and reads each claim back after its commit: the hot path is slower.
   */
  stepClaimed?: (tx: Prisma.TransactionClient, step: ClaimedStep) => Promise<void>;
  /** Inside a kick's transaction, after the repair budget was refilled. */
  runKicked?: (tx: Prisma.TransactionClient, run: { runId: string }) => Promise<void>;
}

/** Test-kit faults; never set in production. */
export interface Faults {
  /** Before the claim: e.g. hold this worker back until a rival has claimed the row. */
  beforeClaim?: (step: ClaimedStep) => Promise<void> | void;
  /** After the claim committed and before the action runs: throw to simulate a process dying here. */
  afterClaim?: (step: ClaimedStep) => Promise<void> | void;
  /** Before the outcome is written: e.g. let another worker take the row over (a straggler). */
  beforeOutcome?: (step: ClaimedStep) => Promise<void> | void;
}

/** What the runtime's operations need, built once by createEngine. */
export interface RuntimeDeps {
  prisma: PrismaClient;
  /**
   * The database's own driver: the run's transactions send their statements through it (ADR 0039).
   * Absent where every statement must go through `prisma` (a host's transaction, ADR 0028).
   */
  driver?: SqlDriver;
  registry: Registry;
  config: EngineConfig;
  logger: Logger;
  workerId: string;
  clock: Clock;
  journal: (anomaly: Anomaly) => Promise<void>;
  emit: EmitEvent;
  hooks: TransactionalHooks;
  faults: Faults;
  /** Completed outcomes this process could not write yet (the database was away); the pool retries them. */
  heldOutcomes: HeldOutcomes;
  /** Rows done, rows left and rate of this process's sweeps: logged per pass, read by /metrics. */
  progress: SweepProgress;
  /**
   * Runs a start wrote already active and handed to this process's pool, by their first wake's job
   * id: the replay of that job takes its run (and the first step the start claimed for it, ADR 0048)
   * from here instead of loading it (ADR 0041), and goes on with the replay its start's probe holds
   * at that step, when there is one (ADR 0097). Taken once.
   */
  startedActive: Map<bigint, StartedActiveRun>;
}

/** A run a start of this process wrote active, as its pool's replay takes it (see `startedActive`). */
export interface StartedActiveRun extends HandedOverRun {
  /** The start's probe, held at the first step the start wrote claimed (ADR 0097); absent or null: none. */
  held?: HeldReplay | null;
}

/** Thrown by a fault to abandon the work the way a killed process would: nothing more is written. */
export class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash';
}
