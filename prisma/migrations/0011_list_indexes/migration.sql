-- Keyset paging and filters of the console's lists (ADR 0018): newest first reads
-- (created_at, id) backwards, stalest first reads (updated_at, id) forwards, with or without a
-- status; search matches a business / correlation key exactly; stuck-only and a state are
-- narrow slices, read through their own index.
CREATE INDEX "flow_runs_created_at_id_idx" ON "sagaflow"."flow_runs"("created_at", "id");
CREATE INDEX "flow_runs_updated_at_id_idx" ON "sagaflow"."flow_runs"("updated_at", "id");
CREATE INDEX "flow_runs_status_created_at_id_idx" ON "sagaflow"."flow_runs"("status", "created_at", "id");
CREATE INDEX "flow_runs_business_key_idx" ON "sagaflow"."flow_runs"("business_key");
CREATE INDEX "flow_runs_stuck_reason_updated_at_idx" ON "sagaflow"."flow_runs"("stuck_reason", "updated_at");
CREATE INDEX "saga_instances_created_at_id_idx" ON "sagaflow"."saga_instances"("created_at", "id");
CREATE INDEX "saga_instances_updated_at_id_idx" ON "sagaflow"."saga_instances"("updated_at", "id");
CREATE INDEX "saga_instances_correlation_key_idx" ON "sagaflow"."saga_instances"("correlation_key");
CREATE INDEX "saga_instances_current_state_status_updated_at_idx" ON "sagaflow"."saga_instances"("current_state", "status", "updated_at");
