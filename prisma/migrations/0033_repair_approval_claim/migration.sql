-- An approved bulk is claimed once (pending → applying) and may be finished by any replica's
-- resumer (ADR 0121): what the claim fixed is kept on the approval, so every pass writes the same.
-- `decided_via`: the approver's API token (as repair_commands.approved_via names it; null for a
-- console session). `bulk_id`: the one bulk id of all its items' audit rows and of its result.
-- `left_at`: a replica that stopped gracefully left the bulk part-applied then; any resumer takes it
-- at its next pass instead of waiting for `approvals.resume_applying_after_seconds`.
ALTER TABLE "sagaflow"."repair_approvals" ADD COLUMN "decided_via" TEXT;
ALTER TABLE "sagaflow"."repair_approvals" ADD COLUMN "bulk_id" UUID;
ALTER TABLE "sagaflow"."repair_approvals" ADD COLUMN "left_at" TIMESTAMPTZ(3);
