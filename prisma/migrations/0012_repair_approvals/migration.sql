-- Two-person approvals for repair commands (issue 9 §1; ADR 0020). A command the approval policy
-- gates is stored here, with its preview, instead of being applied; a second operator approves it
-- (it is then applied through the ordinary repair path, in one transaction with this row's change
-- and its audit row) or rejects it. One row per idempotency key: the same key is the same draft.
CREATE TABLE "sagaflow"."repair_approvals" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "drafter" TEXT NOT NULL,
    "command" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "bulk" BOOLEAN NOT NULL DEFAULT false,
    "payload" JSONB NOT NULL,
    "preview" JSONB NOT NULL,
    "reason" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "decided_by" TEXT,
    "decided_at" TIMESTAMPTZ(3),
    "decision_reason" TEXT,
    "result" JSONB,

    CONSTRAINT "repair_approvals_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "repair_approvals_idempotency_key_key" ON "sagaflow"."repair_approvals"("idempotency_key");
CREATE INDEX "repair_approvals_created_at_id_idx" ON "sagaflow"."repair_approvals"("created_at", "id");
CREATE INDEX "repair_approvals_status_created_at_id_idx" ON "sagaflow"."repair_approvals"("status", "created_at", "id");
CREATE INDEX "repair_approvals_status_expires_at_idx" ON "sagaflow"."repair_approvals"("status", "expires_at");

-- The policy: one row (id = 1), written by an admin. No row = the engine's default policy.
CREATE TABLE "sagaflow"."repair_approval_policy" (
    "id" INTEGER NOT NULL,
    "gated_commands" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "bulk_threshold" INTEGER,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_by" TEXT NOT NULL,

    CONSTRAINT "repair_approval_policy_pkey" PRIMARY KEY ("id")
);

-- The audit row of an approved command names its approval and its approver beside the drafter (actor).
ALTER TABLE "sagaflow"."repair_commands" ADD COLUMN "approval_id" UUID;
ALTER TABLE "sagaflow"."repair_commands" ADD COLUMN "approved_by" TEXT;
