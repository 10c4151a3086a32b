-- A run whose business deadline (expires_at) passed and whose rollback the monitor started.
ALTER TABLE "sagaflow"."flow_runs" ADD COLUMN "expired_at" TIMESTAMPTZ(3);
