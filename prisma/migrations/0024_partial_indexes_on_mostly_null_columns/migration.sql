-- Fewer index writes per flow (issue 11, ADR 0052). No write of flow_runs or action_runs on the hot
-- path is HOT (updated_at and status are indexed), so every insert and update writes an entry in
-- every index whose predicate holds. These indexes are on columns that are NULL for most rows, or
-- NULL at the moment of the hot path's writes, and every query that reads through them compares the
-- column with a strict operator (=, <, <=, LIKE), which the planner proves implies IS NOT NULL. So
-- each becomes partial on that column: same name, same columns, no entry for a NULL.
-- Queries that test `IS NULL` or only sort by the column never used them for that and do not now.

-- Children of a run (child steps, open children, the run page, retention): top-level runs have none.
DROP INDEX "sagaflow"."flow_runs_parent_run_id_parent_sequence_idx";
CREATE INDEX "flow_runs_parent_run_id_parent_sequence_idx" ON "sagaflow"."flow_runs"("parent_run_id", "parent_sequence")
  WHERE "parent_run_id" IS NOT NULL;

-- Stuck runs by reason (the runs list's reason filter): set only while a run is stuck.
DROP INDEX "sagaflow"."flow_runs_stuck_reason_updated_at_idx";
CREATE INDEX "flow_runs_stuck_reason_updated_at_idx" ON "sagaflow"."flow_runs"("stuck_reason", "updated_at")
  WHERE "stuck_reason" IS NOT NULL;

-- Runs with a business deadline: none unless the flow or the config sets one.
DROP INDEX "sagaflow"."flow_runs_expires_at_idx";
CREATE INDEX "flow_runs_expires_at_idx" ON "sagaflow"."flow_runs"("expires_at")
  WHERE "expires_at" IS NOT NULL;

-- Search by business key: only runs started with one.
DROP INDEX "sagaflow"."flow_runs_business_key_idx";
CREATE INDEX "flow_runs_business_key_idx" ON "sagaflow"."flow_runs"("business_key")
  WHERE "business_key" IS NOT NULL;

-- Reject-duplicate start. Two NULL keys never conflict in a unique index, so leaving NULLs out
-- enforces exactly the same rule; the violation is still 23505 naming this index.
DROP INDEX "sagaflow"."flow_runs_flow_name_business_key_key";
CREATE UNIQUE INDEX "flow_runs_flow_name_business_key_key" ON "sagaflow"."flow_runs"("flow_name", "business_key")
  WHERE "business_key" IS NOT NULL;

-- Finished runs in finish order (retention, the finished chart, the oldest-finished metric): a run
-- gets finished_at at its finish, so its insert no longer writes an entry here.
DROP INDEX "sagaflow"."flow_runs_finished_at_status_idx";
CREATE INDEX "flow_runs_finished_at_status_idx" ON "sagaflow"."flow_runs"("finished_at", "status")
  WHERE "finished_at" IS NOT NULL;

-- A step's reclaim deadline: set only while it runs with reclaim on (off by default), nulled by its outcome.
DROP INDEX "sagaflow"."action_runs_reclaim_stale_at_idx";
CREATE INDEX "action_runs_reclaim_stale_at_idx" ON "sagaflow"."action_runs"("reclaim_stale_at")
  WHERE "reclaim_stale_at" IS NOT NULL;
DROP INDEX "sagaflow"."compensation_runs_reclaim_stale_at_idx";
CREATE INDEX "compensation_runs_reclaim_stale_at_idx" ON "sagaflow"."compensation_runs"("reclaim_stale_at")
  WHERE "reclaim_stale_at" IS NOT NULL;

-- A step's business deadline: only steps given one.
DROP INDEX "sagaflow"."action_runs_expires_at_idx";
CREATE INDEX "action_runs_expires_at_idx" ON "sagaflow"."action_runs"("expires_at")
  WHERE "expires_at" IS NOT NULL;
DROP INDEX "sagaflow"."compensation_runs_expires_at_idx";
CREATE INDEX "compensation_runs_expires_at_idx" ON "sagaflow"."compensation_runs"("expires_at")
  WHERE "expires_at" IS NOT NULL;
