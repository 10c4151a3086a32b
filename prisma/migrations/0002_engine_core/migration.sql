-- AlterTable
ALTER TABLE "sagaflow"."flow_runs" ADD COLUMN "waiting_for" TEXT,
ADD COLUMN "cancel_reason" TEXT,
ADD COLUMN "cancel_deadline_at" TIMESTAMPTZ(3),
ADD COLUMN "parent_cancel_policy" TEXT;

-- AlterTable
ALTER TABLE "sagaflow"."action_runs" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'action',
ADD COLUMN "wake_at" TIMESTAMPTZ(3);

-- DropIndex
DROP INDEX "sagaflow"."flow_runs_parent_run_id_idx";

-- CreateIndex
CREATE INDEX "flow_runs_parent_run_id_parent_sequence_idx" ON "sagaflow"."flow_runs"("parent_run_id", "parent_sequence");

-- AlterTable
ALTER TABLE "sagaflow"."signals" ADD COLUMN "seq" BIGSERIAL NOT NULL;
