-- The bulk approvals naming a target (ADR 0119, second addendum): a bulk's targets are only in its
-- preview (one entry per item, each with its target), so the audit trail filtered by a run, instance
-- or outbox row finds the bulk drafts on it through a GIN index of the bulk rows' previews. Partial:
-- single-command approvals (found by target_type, target_id) have no entry.
CREATE INDEX "repair_approvals_bulk_preview_idx" ON "sagaflow"."repair_approvals" USING GIN ("preview" jsonb_path_ops) WHERE "bulk";
