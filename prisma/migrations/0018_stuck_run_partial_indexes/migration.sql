-- The console's stuck view at scale (ADR 0032): stuck runs are a thin slice of flow_runs (1 % at a
-- million runs) spread over its whole history, so reading them through an index of all runs walks
-- past every healthy one, and each per-status count under "stuck only" walks every run of that
-- status. Partial indexes hold the stuck runs alone (a row enters them when it gets a reason and
-- leaves when the reason is cleared): newest first, and by status for the view's per-status counts
-- and its open-status pages. The predicate is the API's filter word for word, so the planner can
-- prove the index fits.
CREATE INDEX "flow_runs_stuck_created_at_id_idx" ON "sagaflow"."flow_runs"("created_at", "id")
  WHERE "stuck_reason" IS NOT NULL;
CREATE INDEX "flow_runs_stuck_status_created_at_id_idx" ON "sagaflow"."flow_runs"("status", "created_at", "id")
  WHERE "stuck_reason" IS NOT NULL;
