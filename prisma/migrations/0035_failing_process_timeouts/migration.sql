-- A process timeout that keeps failing (ADR 0127): when it first failed, kept for the instance's view,
-- and two partial indexes for the reads that look for failing instances by that fact rather than by a
-- key (the overview's headline, /metrics, the instances list's failing filter). Both stay small: they
-- hold only the timers that failed and are still Pending, and the instances with a failure record.
ALTER TABLE "sagaflow"."process_timeouts" ADD COLUMN "first_failed_at" TIMESTAMPTZ(3);
CREATE INDEX "process_timeouts_failing_idx" ON "sagaflow"."process_timeouts" ("instance_id") WHERE "status" = 'Pending' AND "attempts" > 0;
CREATE INDEX "saga_instances_failure_idx" ON "sagaflow"."saga_instances" ("process_name") WHERE "failure_redelivery_key" IS NOT NULL;
