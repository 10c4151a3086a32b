import type { RepairKind } from './repair-command.ts';
import type { InstanceTarget, RepairHandler, RunTarget } from './repair-handler.ts';
import { forceTransitionRepair, operatorCommandRepair, releaseRepair } from './instance-repairs.ts';
import { requeueRepair, type OutboxTarget } from './outbox-repairs.ts';
import { reclaimStepRepair } from './reclaim-step-repair.ts';
import { cancelRepair, expireRepair, kickRepair, signalRepair, terminateRepair } from './run-repairs.ts';
import { completeStepRepair, resumeFromStepRepair, retryStepRepair } from './step-repairs.ts';

/* eslint-disable @typescript-eslint/no-explicit-any -- one table over handlers of different command types */
type AnyHandler<T> = RepairHandler<any, T, any>;

/** Each command of the catalogue and the handler that plans and performs it. */
export const runRepairHandlers: Partial<Record<RepairKind, AnyHandler<RunTarget>>> = {
  'run.kick': kickRepair,
  'run.retry_step': retryStepRepair,
  'run.reclaim_step': reclaimStepRepair,
  'run.cancel': cancelRepair,
  'run.terminate': terminateRepair,
  'run.signal': signalRepair,
  'run.expire': expireRepair,
  'run.complete_step': completeStepRepair,
  'run.resume_from_step': resumeFromStepRepair,
};

export const instanceRepairHandlers: Partial<Record<RepairKind, AnyHandler<InstanceTarget>>> = {
  'instance.release': releaseRepair,
  'instance.command': operatorCommandRepair,
  'instance.force_transition': forceTransitionRepair,
};

export const outboxRepairHandlers: Partial<Record<RepairKind, AnyHandler<OutboxTarget>>> = {
  'outbox.requeue': requeueRepair,
};
