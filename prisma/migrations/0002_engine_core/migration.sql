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

-- AlterTable
ALTER TABLE "sagaflow"."compensation_runs" ADD COLUMN "ordinal" INTEGER NOT NULL DEFAULT 0;

-- DropIndex
DROP INDEX "sagaflow"."compensation_runs_run_id_action_sequence_rollback_level_key";

-- CreateIndex
CREATE UNIQUE INDEX "compensation_runs_run_id_rollback_level_ordinal_key" ON "sagaflow"."compensation_runs"("run_id", "rollback_level", "ordinal");
