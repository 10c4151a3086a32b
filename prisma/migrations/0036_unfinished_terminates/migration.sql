-- The monitor finishes a terminate that stopped between its batches (ADR 0140): it looks for open runs
-- whose cleanup window has closed, oldest first. The index holds only the open runs asked to cancel (a
-- cancel's, an expiry's or a terminate's fence): no entry for a run nobody asked, so a flow's own writes
-- add none, and a run leaves it when it closes.
CREATE INDEX "flow_runs_open_cancel_deadline_idx" ON "sagaflow"."flow_runs"("cancel_deadline_at", "id")
  WHERE "cancel_deadline_at" IS NOT NULL AND "status" IN ('Pending', 'Running', 'Waiting', 'Compensating');
