-- Issue 12's remaining targets (ADR 0036).

-- The outbox publisher finds the oldest due heads at the front of the Pending rows in insertion
-- order: one range read of a few batches' worth of rows instead of a probe per source (claim-outbox-batch.ts).
CREATE INDEX "outbox_pending_seq_idx" ON "sagaflow"."outbox"("seq")
  WHERE "status" = 'Pending';
