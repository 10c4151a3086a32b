import type { Json } from '../definitions/define-action.ts';

/**
 * What a repair does, or would do: the same shape for its preview and its result, so a caller can
 * show the one and compare it with the other.
 */
export interface RepairEffects {
  /** State changes: a run's or step's status, an instance's state. */
  transitions: { subject: string; from: string; to: string }[];
  /** Compensations the repair starts (the rollback its replay will run), newest first. */
  compensations: { actionSequence: number; name: string }[];
  /** Wake jobs it sends. */
  jobs: { kind: 'wake-run'; runId: string; availableAt: string }[];
  /** Signals it sends. */
  signals: { runId: string; name: string; payload: Json }[];
  /** Outbox messages it queues. */
  outboxMessages: { type: string; destination: string }[];
  /** History rows it appends: the run's flow_events or the instance's process_transitions. */
  history: string[];
  /** Anything else an operator should know (rows it forgets, messages it resumes). */
  notes: string[];
}

export function noEffects(): RepairEffects {
  return { transitions: [], compensations: [], jobs: [], signals: [], outboxMessages: [], history: [], notes: [] };
}

/** `a`'s effects, then `b`'s. */
export function mergeEffects(a: RepairEffects, b: RepairEffects): RepairEffects {
  return {
    transitions: [...a.transitions, ...b.transitions],
    compensations: [...a.compensations, ...b.compensations],
    jobs: [...a.jobs, ...b.jobs],
    signals: [...a.signals, ...b.signals],
    outboxMessages: [...a.outboxMessages, ...b.outboxMessages],
    history: [...a.history, ...b.history],
    notes: [...a.notes, ...b.notes],
  };
}

/** The target's state under the lock: what the expectation is compared with. */
export type RepairActualState =
  | { exists: false }
  | {
      exists: true;
      runStatus: string;
      stuckReason: string | null;
      step?: { status: string; attempts: number; kind: string; name: string } | null;
    }
  | {
      exists: true;
      processName: string;
      status: string;
      state: string;
      version: number;
    }
  | {
      exists: true;
      /** An outbox row: what it is, where it goes, and its status and attempts (what the expectation names). */
      outbox: { type: string; destination: string; sourceKind: string; sourceId: string };
      status: string;
      attempts: number;
    };

export interface RepairPreview {
  kind: string;
  /** Whether the state the command was drafted against holds now. */
  expectedHolds: boolean;
  actual: RepairActualState;
  /** Whether apply would act (the expectation holds and nothing below blocks it). */
  applicable: boolean;
  /** Why it would not act, besides a changed state. */
  blockers: string[];
  /** What apply would do now. */
  effects: RepairEffects;
  destructive: boolean;
  adminOnly: boolean;
}

export type RepairStatus = 'applied' | 'conflict' | 'refused';

export interface RepairResult {
  /** The audit row's id. */
  id: string;
  kind: string;
  status: RepairStatus;
  target: { type: string; id: string };
  actual: RepairActualState;
  effects: RepairEffects;
  at: string;
  /** True when this call returned the first result of its idempotency key instead of acting. */
  replayed: boolean;
  /**
   * What work after the commit did, in this call (a terminate's descendants ended in batches, or where
   * that stopped: ADR 0126). Not part of `effects`, which are what was applied and equal the preview's;
   * absent when there was none.
   */
  afterCommit?: string[];
}
