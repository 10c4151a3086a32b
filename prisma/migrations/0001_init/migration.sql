-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "sagaflow";

-- CreateTable
CREATE TABLE "sagaflow"."flow_runs" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "flow_name" TEXT NOT NULL,
    "flow_version" INTEGER NOT NULL,
    "business_key" TEXT,
    "status" TEXT NOT NULL DEFAULT 'Pending',
    "stuck_reason" TEXT,
    "input" JSONB NOT NULL,
    "output" JSONB,
    "error" JSONB,
    "tags" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "parent_run_id" UUID,
    "parent_sequence" INTEGER,
    "expires_at" TIMESTAMPTZ(3),
    "run_timeout_at" TIMESTAMPTZ(3),
    "expiry_attempts" INTEGER NOT NULL DEFAULT 0,
    "expiry_retry_at" TIMESTAMPTZ(3),
    "cancel_requested_at" TIMESTAMPTZ(3),
    "wake_at" TIMESTAMPTZ(3),
    "repair_count" INTEGER NOT NULL DEFAULT 0,
    "version" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "flow_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."action_runs" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "run_id" UUID NOT NULL,
    "sequence" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'Pending',
    "input" JSONB NOT NULL,
    "output" JSONB,
    "error" JSONB,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER NOT NULL DEFAULT 1,
    "parallel_block" INTEGER,
    "available_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "reclaim_stale_after_seconds" INTEGER,
    "reclaim_stale_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "claimed_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "action_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."compensation_runs" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "run_id" UUID NOT NULL,
    "action_sequence" INTEGER NOT NULL,
    "rollback_level" INTEGER NOT NULL DEFAULT 0,
    "name" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'Pending',
    "input" JSONB NOT NULL,
    "output" JSONB,
    "error" JSONB,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER NOT NULL DEFAULT 1,
    "available_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "reclaim_stale_after_seconds" INTEGER,
    "reclaim_stale_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "claimed_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "compensation_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."flow_events" (
    "id" BIGSERIAL NOT NULL,
    "run_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "sequence" INTEGER,
    "row_id" UUID,
    "data" JSONB NOT NULL DEFAULT '{}',
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "flow_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."anomaly_log" (
    "id" BIGSERIAL NOT NULL,
    "code" TEXT NOT NULL,
    "run_id" UUID,
    "row_id" UUID,
    "sequence" INTEGER,
    "name" TEXT,
    "site" TEXT,
    "message" TEXT NOT NULL,
    "details" JSONB NOT NULL DEFAULT '{}',
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "anomaly_log_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."signals" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "run_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "payload" JSONB,
    "status" TEXT NOT NULL DEFAULT 'Pending',
    "consumed_by_sequence" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "consumed_at" TIMESTAMPTZ(3),

    CONSTRAINT "signals_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."timers" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "run_id" UUID NOT NULL,
    "sequence" INTEGER NOT NULL,
    "fire_at" TIMESTAMPTZ(3) NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'Pending',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "fired_at" TIMESTAMPTZ(3),

    CONSTRAINT "timers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."jobs" (
    "id" BIGSERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "run_id" UUID,
    "row_id" UUID,
    "payload" JSONB NOT NULL DEFAULT '{}',
    "available_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_by" TEXT,
    "locked_until" TIMESTAMPTZ(3),
    "deliveries" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."locks" (
    "key" TEXT NOT NULL,
    "owner" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "locks_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "sagaflow"."leases" (
    "name" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "renewed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "leases_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "sagaflow"."saga_instances" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "process_name" TEXT NOT NULL,
    "correlation_key" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'ACTIVE',
    "current_state" TEXT NOT NULL,
    "state" JSONB,
    "version" INTEGER NOT NULL DEFAULT 0,
    "next_timer_due_at" TIMESTAMPTZ(3),
    "last_message_id" TEXT,
    "failure_redelivery_key" TEXT,
    "failure_position" BIGINT,
    "failure_error_type" TEXT,
    "failure_message" VARCHAR(1000),
    "failure_message_type" TEXT,
    "first_failed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "saga_instances_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."process_transitions" (
    "id" BIGSERIAL NOT NULL,
    "instance_id" UUID NOT NULL,
    "from_state" TEXT NOT NULL,
    "to_state" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "message_type" TEXT NOT NULL,
    "outcome" TEXT NOT NULL DEFAULT 'applied',
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "process_transitions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."process_timeouts" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "instance_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "expected_state" TEXT NOT NULL,
    "payload" JSONB NOT NULL DEFAULT '{}',
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'Pending',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "process_timeouts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."outbox" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "message_id" TEXT NOT NULL,
    "source_kind" TEXT NOT NULL,
    "source_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "destination" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "headers" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL DEFAULT 'Pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "available_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."inbox" (
    "consumer" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "message_type" TEXT NOT NULL,
    "instance_id" UUID,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "inbox_pkey" PRIMARY KEY ("consumer", "message_id")
);

-- CreateTable
CREATE TABLE "sagaflow"."operators" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "email" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "password_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "disabled_at" TIMESTAMPTZ(3),

    CONSTRAINT "operators_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."sessions" (
    "id" TEXT NOT NULL,
    "operator_id" UUID NOT NULL,
    "csrf_token" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sagaflow"."repair_commands" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "idempotency_key" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "expected_state" JSONB NOT NULL,
    "params" JSONB NOT NULL DEFAULT '{}',
    "reason" TEXT NOT NULL,
    "requested_by" UUID NOT NULL,
    "approved_by" UUID,
    "status" TEXT NOT NULL DEFAULT 'Draft',
    "preview" JSONB,
    "result" JSONB,
    "rejection" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "decided_at" TIMESTAMPTZ(3),
    "applied_at" TIMESTAMPTZ(3),

    CONSTRAINT "repair_commands_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "flow_runs_status_updated_at_idx" ON "sagaflow"."flow_runs"("status", "updated_at");

-- CreateIndex
CREATE INDEX "flow_runs_flow_name_status_updated_at_idx" ON "sagaflow"."flow_runs"("flow_name", "status", "updated_at");

-- CreateIndex
CREATE INDEX "flow_runs_expires_at_idx" ON "sagaflow"."flow_runs"("expires_at");

-- CreateIndex
CREATE INDEX "flow_runs_parent_run_id_idx" ON "sagaflow"."flow_runs"("parent_run_id");

-- CreateIndex
CREATE UNIQUE INDEX "flow_runs_flow_name_business_key_key" ON "sagaflow"."flow_runs"("flow_name", "business_key");

-- CreateIndex
CREATE INDEX "action_runs_status_updated_at_idx" ON "sagaflow"."action_runs"("status", "updated_at");

-- CreateIndex
CREATE INDEX "action_runs_reclaim_stale_at_idx" ON "sagaflow"."action_runs"("reclaim_stale_at");

-- CreateIndex
CREATE INDEX "action_runs_expires_at_idx" ON "sagaflow"."action_runs"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "action_runs_run_id_sequence_key" ON "sagaflow"."action_runs"("run_id", "sequence");

-- CreateIndex
CREATE INDEX "compensation_runs_status_updated_at_idx" ON "sagaflow"."compensation_runs"("status", "updated_at");

-- CreateIndex
CREATE INDEX "compensation_runs_reclaim_stale_at_idx" ON "sagaflow"."compensation_runs"("reclaim_stale_at");

-- CreateIndex
CREATE INDEX "compensation_runs_expires_at_idx" ON "sagaflow"."compensation_runs"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "compensation_runs_run_id_action_sequence_rollback_level_key" ON "sagaflow"."compensation_runs"("run_id", "action_sequence", "rollback_level");

-- CreateIndex
CREATE INDEX "flow_events_run_id_id_idx" ON "sagaflow"."flow_events"("run_id", "id");

-- CreateIndex
CREATE INDEX "anomaly_log_code_at_idx" ON "sagaflow"."anomaly_log"("code", "at");

-- CreateIndex
CREATE INDEX "anomaly_log_run_id_idx" ON "sagaflow"."anomaly_log"("run_id");

-- CreateIndex
CREATE INDEX "anomaly_log_at_idx" ON "sagaflow"."anomaly_log"("at");

-- CreateIndex
CREATE INDEX "signals_run_id_name_status_idx" ON "sagaflow"."signals"("run_id", "name", "status");

-- CreateIndex
CREATE INDEX "timers_status_fire_at_idx" ON "sagaflow"."timers"("status", "fire_at");

-- CreateIndex
CREATE UNIQUE INDEX "timers_run_id_sequence_key" ON "sagaflow"."timers"("run_id", "sequence");

-- CreateIndex
CREATE INDEX "jobs_available_at_idx" ON "sagaflow"."jobs"("available_at");

-- CreateIndex
CREATE INDEX "jobs_run_id_idx" ON "sagaflow"."jobs"("run_id");

-- CreateIndex
CREATE INDEX "locks_expires_at_idx" ON "sagaflow"."locks"("expires_at");

-- CreateIndex
CREATE INDEX "saga_instances_status_updated_at_idx" ON "sagaflow"."saga_instances"("status", "updated_at");

-- CreateIndex
CREATE INDEX "saga_instances_process_name_status_updated_at_idx" ON "sagaflow"."saga_instances"("process_name", "status", "updated_at");

-- CreateIndex
CREATE UNIQUE INDEX "saga_instances_process_name_correlation_key_key" ON "sagaflow"."saga_instances"("process_name", "correlation_key");

-- CreateIndex
CREATE INDEX "process_transitions_instance_id_id_idx" ON "sagaflow"."process_transitions"("instance_id", "id");

-- CreateIndex
CREATE INDEX "process_transitions_from_state_to_state_idx" ON "sagaflow"."process_transitions"("from_state", "to_state");

-- CreateIndex
CREATE INDEX "process_timeouts_status_due_at_idx" ON "sagaflow"."process_timeouts"("status", "due_at");

-- CreateIndex
CREATE INDEX "process_timeouts_instance_id_idx" ON "sagaflow"."process_timeouts"("instance_id");

-- CreateIndex
CREATE UNIQUE INDEX "outbox_message_id_key" ON "sagaflow"."outbox"("message_id");

-- CreateIndex
CREATE INDEX "outbox_status_available_at_idx" ON "sagaflow"."outbox"("status", "available_at");

-- CreateIndex
CREATE INDEX "outbox_source_id_idx" ON "sagaflow"."outbox"("source_id");

-- CreateIndex
CREATE UNIQUE INDEX "operators_email_key" ON "sagaflow"."operators"("email");

-- CreateIndex
CREATE INDEX "sessions_operator_id_idx" ON "sagaflow"."sessions"("operator_id");

-- CreateIndex
CREATE INDEX "sessions_expires_at_idx" ON "sagaflow"."sessions"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "repair_commands_idempotency_key_key" ON "sagaflow"."repair_commands"("idempotency_key");

-- CreateIndex
CREATE INDEX "repair_commands_target_type_target_id_idx" ON "sagaflow"."repair_commands"("target_type", "target_id");

-- CreateIndex
CREATE INDEX "repair_commands_status_created_at_idx" ON "sagaflow"."repair_commands"("status", "created_at");

-- AddForeignKey
ALTER TABLE "sagaflow"."action_runs" ADD CONSTRAINT "action_runs_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "sagaflow"."flow_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sagaflow"."compensation_runs" ADD CONSTRAINT "compensation_runs_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "sagaflow"."flow_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sagaflow"."flow_events" ADD CONSTRAINT "flow_events_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "sagaflow"."flow_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sagaflow"."signals" ADD CONSTRAINT "signals_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "sagaflow"."flow_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sagaflow"."timers" ADD CONSTRAINT "timers_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "sagaflow"."flow_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sagaflow"."process_transitions" ADD CONSTRAINT "process_transitions_instance_id_fkey" FOREIGN KEY ("instance_id") REFERENCES "sagaflow"."saga_instances"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sagaflow"."process_timeouts" ADD CONSTRAINT "process_timeouts_instance_id_fkey" FOREIGN KEY ("instance_id") REFERENCES "sagaflow"."saga_instances"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sagaflow"."sessions" ADD CONSTRAINT "sessions_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "sagaflow"."operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
