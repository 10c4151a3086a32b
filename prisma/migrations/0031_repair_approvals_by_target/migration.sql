-- The audit trail filtered by a run, an instance or an outbox row also lists the drafts and
-- rejections of commands on it (ADR 0119): their audit rows name the approval, so the approvals of
-- the target are found first, through this index.
CREATE INDEX "repair_approvals_target_type_target_id_idx" ON "sagaflow"."repair_approvals"("target_type", "target_id");
