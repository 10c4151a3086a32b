-- Process managers (ADR 0008): what deliver, quarantine, release and the timeout scheduler need
-- beyond 0001's tables.

-- The payload of the message an instance stopped on (its id is the failure's redelivery key and its
-- type is failure_message_type), kept so `release(..., { mode: 'retry' })` can deliver it again.
ALTER TABLE "sagaflow"."saga_instances" ADD COLUMN "failure_payload" JSONB;

-- Who and why, for operator commands, releases and quarantines (the audit lives in the history).
ALTER TABLE "sagaflow"."process_transitions" ADD COLUMN "detail" JSONB;

-- A timeout whose delivery throws is retried later, not in a tight loop; its deadline stays put.
ALTER TABLE "sagaflow"."process_timeouts" ADD COLUMN "attempts" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "sagaflow"."process_timeouts" ADD COLUMN "last_error" TEXT;
ALTER TABLE "sagaflow"."process_timeouts" ADD COLUMN "retry_at" TIMESTAMPTZ(3);
