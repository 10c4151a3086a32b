export type { KickResult } from './api/kick-run.ts';
export type { ReclaimResult } from './api/reclaim-step.ts';
export type { StartFlowOptions } from './api/start-flow.ts';
export type { DoctorPass } from './api/sweep-doctor.ts';
export type { ExpiredRunsSweep } from './api/sweep-expired-runs.ts';
export { createEngine, type Engine, type EngineOptions } from './create-engine.ts';
export { createDatabase, type DatabaseOptions } from './db/create-database.ts';
export type { Database, Subscription } from './db/database.ts';
export type { HostPgClient, HostPrismaTransaction, HostTransaction } from './db/host-transaction.ts';
export type { DataDirLockOptions } from './db/lock-data-dir.ts';
export { migrate, type MigrateOptions, type MigrateResult, type MigrationLockOptions } from './db/migrate.ts';
export { migrationStatus, type MigrationStatus } from './db/migration-status.ts';
export { migrationsDir } from './db/migrations-dir.ts';
export {
  defineAction,
  NonRetryableError,
  type ActionDefinition,
  type ActionSchemas,
  type Json,
  type RetryPolicy,
} from './definitions/define-action.ts';
export { defineFlow } from './definitions/define-flow.ts';
export type { ActionDescription, FlowDescription } from './definitions/describe-definitions.ts';
export type {
  CompensateOptions,
  FlowContext,
  AnyFlowDefinition,
  FlowDefinition,
  FlowSchemas,
  StepBuilder,
  StepOutputs,
} from './definitions/flow-context.ts';
export type { StandardSchemaV1 } from './definitions/standard-schema.ts';
export { EngineError, type EngineErrorCode } from './errors/engine-error.ts';
export { isNoConnectionInTime } from './runtime/in-run-transaction.ts';
export { consumeOnce, type ConsumeOnceResult } from './outbox/consume-once.ts';
export { inProcessTransport } from './outbox/in-process-transport.ts';
export {
  natsJetStreamTransport,
  type NatsConnectionLike,
  type NatsJetStreamTransportOptions,
} from './outbox/nats-jetstream-transport.ts';
export { outboxBackoffMs } from './outbox/outbox-backoff.ts';
export { encodeOutboxBody, type OutboxEnvelope } from './outbox/outbox-envelope.ts';
export { listDeadOutbox, maxDeadOutboxRows } from './outbox/list-dead-outbox.ts';
export { outboxLag, type OutboxLag } from './outbox/outbox-lag.ts';
export { readOutboxRow, type OutboxRowView } from './outbox/read-outbox-row.ts';
export { instancePendingWork, type InstancePendingWork } from './process/instance-pending-work.ts';
export { instancesFailingTimeouts } from './process/failing-timeouts.ts';
export {
  pageRunCompensations,
  pageRunEvents,
  pageRunSteps,
  type CompensationKey,
  type HistoryPage,
  type HistoryReader,
  type HistoryWindow,
} from './api/page-run-history.ts';
export { readRunChanges, type RunChanges, type RunHeld } from './api/read-run-changes.ts';
export { readRunHead, type RunHead, type RunHeadSizes } from './api/read-run-head.ts';
export type { OutboxPublisherOptions } from './outbox/outbox-publisher-options.ts';
export type { OutboxTransport } from './outbox/outbox-transport.ts';
export { publishOutboxBatch, type OutboxBatchResult } from './outbox/publish-outbox-batch.ts';
export {
  decodeWebhookHeader,
  encodeWebhookHeader,
  signWebhook,
  verifyWebhookSignature,
  webhookHeaders,
} from './outbox/sign-webhook.ts';
export { startOutboxPublisher, type OutboxPublisher } from './outbox/start-outbox-publisher.ts';
export { webhookTransport, type WebhookTransportOptions } from './outbox/webhook-transport.ts';
export type { Maintenance, MaintenanceCounters } from './maintenance/create-maintenance.ts';
export type { MaintainedTable, MaintenancePass } from './maintenance/run-maintenance-pass.ts';
export type { MaintenanceCommand } from './store/maintenance/maintain-table.ts';
export type { PruneOptions } from './retention/prune-options.ts';
export type { PrunePhase, PruneProgress, PruneReport } from './retention/prune-retention.ts';
export type { PrunePreview, Retention } from './retention/create-retention.ts';
export type { RetentionRowCounts, RetentionTable } from './store/retention/retention-tables.ts';
export { systemClock, type Clock } from './runtime/clock.ts';
export { parseEngineConfig, type EngineConfig, type EngineConfigInput } from './runtime/engine-config.ts';
export type { EngineEventMap, EngineEventName, EngineEvents, EngineListener } from './runtime/engine-events.ts';
export {
  createProcessManager,
  type DeliverOptions,
  type ProcessManager,
  type ProcessManagerOptions,
} from './process/create-process-manager.ts';
export { decide, type ArmedTimeout, type Decision, type IgnoreReason, type ProcessSnapshot } from './process/decide.ts';
export {
  defineProcess,
  type EmittedCommand,
  type OperatorCommandSpec,
  type ProcessDefinition,
  type ProcessMessageOf,
  type ProcessSpec,
  type ScheduledTimeout,
  type TimeoutPayload,
  type TimeoutSpec,
  type TransitionResult,
  type TransitionSpec,
} from './process/define-process.ts';
export type { DeliverOutcome, DeliverResult } from './process/deliver-in-transaction.ts';
export { describeProcess, type ProcessDescription } from './process/describe-process.ts';
export {
  instanceStatuses,
  type FailingTimeout,
  type InstanceFailure,
  type InstanceStatus,
  type ProcessInstance,
} from './process/instance-view.ts';
export type { InstanceTransition } from './process/instance-history.ts';
export type { IncomingMessage } from './process/parse-message.ts';
export type { OperatorCommandPreview } from './process/preview-operator-command.ts';
export type { ReleaseOptions, ReleaseResult } from './process/release-instance.ts';
export type { OperatorCommand, OperatorCommandResult } from './process/run-operator-command.ts';
export {
  defaultStoreRetry,
  isRolledBackConflict,
  isTransientStoreError,
  storeRetryDelay,
  type StoreRetryPolicy,
} from './process/store-retry.ts';
export { FlowError, isFlowError, type FlowErrorCode } from './runtime/flow-error.ts';
export type { ClaimedStep, TransactionalHooks } from './runtime/runtime-deps.ts';
export type {
  ActionView,
  AnomalyView,
  CompensationView,
  FlowEventView,
  RunDetail,
  RunView,
} from './runtime/run-view.ts';
export type { BulkRepairCommand, BulkRepairItemResult, BulkRepairResult } from './repairs/apply-bulk-repair.ts';
export type { Repairs } from './repairs/create-repairs.ts';
export type { Approvals, PolicyChange } from './approvals/create-approvals.ts';
export { defaultApprovalPolicy, type ApprovalPolicy, type StoredApprovalPolicy } from './approvals/approval-policy.ts';
export type { ApprovalAudit, ApprovalView, AwaitingApproval, DecidedDraft } from './approvals/approval-view.ts';
export { repairCatalogue, type RepairCommandInfo } from './repairs/repair-catalogue.ts';
export {
  parseRepairCommand,
  repairCommandSchema,
  type RepairCommand,
  type RepairCommandOf,
  type RepairKind,
} from './repairs/repair-command.ts';
export type {
  RepairActualState,
  RepairEffects,
  RepairPreview,
  RepairResult,
  RepairStatus,
} from './repairs/repair-effects.ts';
export { safeRepairsByStuckReason, safeRepairsFor, stuckReasonKind } from './repairs/safe-repairs.ts';
export { anomalyCodes, type AnomalyCode } from './store/insert-anomaly.ts';
export { heldRunShownForMs } from './sweeps/on-monitored-run.ts';
export type { ListRunsFilter } from './store/list-runs.ts';
export { openRunStatuses, terminalRunStatuses, type RunStatus } from './store/types.ts';
export type { MonitorPass } from './worker/start-monitor.ts';
export type { WorkerPoolCounters } from './worker/pool-counters.ts';
export {
  createSweepProgress,
  type SweepFigures,
  type SweepName,
  type SweepPass,
  type SweepProgress,
} from './sweeps/sweep-progress.ts';
