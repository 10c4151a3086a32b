-- Sweeps sized for a backlog (ADR 0026): each sweep finds its candidates through a partial index
-- that holds the OPEN rows only, so its cost follows the backlog, not the table's history. The
-- predicates are the sweeps' own filters, word for word, so the planner can prove the index fits.

-- The monitor's step sweep: steps still open with a business deadline.
CREATE INDEX "action_runs_open_expires_at_idx" ON "sagaflow"."action_runs"("expires_at")
  WHERE "expires_at" IS NOT NULL AND "status" IN ('Pending', 'Running', 'Failed');
CREATE INDEX "compensation_runs_open_expires_at_idx" ON "sagaflow"."compensation_runs"("expires_at")
  WHERE "expires_at" IS NOT NULL AND "status" IN ('Pending', 'Running', 'Failed');

-- The monitor's run sweep: open runs with a deadline, not yet expired or being cancelled.
CREATE INDEX "flow_runs_overdue_expires_at_id_idx" ON "sagaflow"."flow_runs"("expires_at", "id")
  WHERE "expires_at" IS NOT NULL AND "expired_at" IS NULL AND "cancel_requested_at" IS NULL
    AND "status" IN ('Pending', 'Running', 'Waiting', 'Compensating');

-- The doctor, one index per rule, keyed by run so a pass walks them together by run id (keyset).
CREATE INDEX "flow_runs_pending_id_created_at_idx" ON "sagaflow"."flow_runs"("id", "created_at")
  WHERE "status" = 'Pending';
CREATE INDEX "action_runs_waiting_run_id_wake_at_idx" ON "sagaflow"."action_runs"("run_id", "wake_at")
  WHERE "status" = 'Waiting' AND "kind" IN ('signal', 'timer');
CREATE INDEX "action_runs_failed_run_id_available_at_idx" ON "sagaflow"."action_runs"("run_id", "available_at")
  WHERE "status" = 'Failed';
CREATE INDEX "action_runs_stale_run_id_reclaim_stale_at_idx" ON "sagaflow"."action_runs"("run_id", "reclaim_stale_at")
  WHERE "status" = 'Running' AND "parallel_block" IS NULL AND "reclaim_stale_at" IS NOT NULL;

-- The process-timeout scheduler: armed timers only.
CREATE INDEX "process_timeouts_pending_due_at_id_idx" ON "sagaflow"."process_timeouts"("due_at", "id")
  WHERE "status" = 'Pending';

-- The outbox publisher: each source's unpublished rows in order (its head, and the claim's window).
CREATE INDEX "outbox_pending_source_id_seq_idx" ON "sagaflow"."outbox"("source_id", "seq")
  WHERE "status" = 'Pending';
