-- Issue 12's remaining targets (ADR 0036).

-- The outbox publisher finds the oldest due heads at the front of the Pending rows in insertion
-- order: one range read of a few batches' worth of rows instead of a probe per source (claim-outbox-batch.ts).
CREATE INDEX "outbox_pending_seq_idx" ON "sagaflow"."outbox"("seq")
  WHERE "status" = 'Pending';

-- The overview's outbox chart counts published rows per bucket with their lag (published_at -
-- created_at): with created_at beside published_at the read is index-only. It replaces the index on
-- published_at alone (retention's order), so marking a row Published writes no more index entries.
DROP INDEX "sagaflow"."outbox_published_at_idx";
CREATE INDEX "outbox_published_at_created_at_idx" ON "sagaflow"."outbox"("published_at", "created_at");

-- The definitions page's live counts: open runs per flow, version and status, and the stuck ones
-- among them, each an index-only read of the runs in flight, not a heap read of every open run.
-- The predicates are read-definitions.ts's filters, word for word.
CREATE INDEX "flow_runs_open_flow_version_status_idx" ON "sagaflow"."flow_runs"("flow_name", "flow_version", "status")
  WHERE "status" IN ('Pending', 'Running', 'Waiting', 'Compensating');
CREATE INDEX "flow_runs_stuck_flow_version_status_idx" ON "sagaflow"."flow_runs"("flow_name", "flow_version", "status")
  WHERE "stuck_reason" IS NOT NULL;

-- Stuck runs by kind of reason (the overview and /metrics): an index-only read of the stuck runs'
-- reasons, instead of a heap fetch per stuck run (10 k at a million runs).
CREATE INDEX "flow_runs_stuck_reason_status_idx" ON "sagaflow"."flow_runs"("stuck_reason", "status")
  WHERE "stuck_reason" IS NOT NULL;

-- Open process instances by process, state and status with the stalest update (the overview, the
-- definitions page and /metrics): an index-only read of the open instances alone.
CREATE INDEX "saga_instances_open_process_state_idx" ON "sagaflow"."saga_instances"("process_name", "current_state", "status", "updated_at")
  WHERE "status" IN ('ACTIVE', 'QUARANTINED');

-- The overview's transitions chart: the window's applied and repair transitions with their states
-- and instance, index-only (the process is then looked up per instance). The predicate is
-- read-series.ts's filter, word for word.
CREATE INDEX "process_transitions_counted_at_idx" ON "sagaflow"."process_transitions"("at", "instance_id", "from_state", "to_state")
  WHERE "outcome" IN ('applied', 'repair');
