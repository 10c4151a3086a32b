-- Outbox publisher (ADR 0009): per-source publish order needs a total order of insertion.
-- created_at cannot give it: every row one transaction writes shares now() (and timestamptz(3)
-- ties beyond that). Rows of one source are written under that source's instance lock, so the
-- sequence order is the order they were decided in.
ALTER TABLE "sagaflow"."outbox" ADD COLUMN "seq" BIGSERIAL NOT NULL;

-- CreateIndex
CREATE INDEX "outbox_source_id_seq_idx" ON "sagaflow"."outbox"("source_id", "seq");
