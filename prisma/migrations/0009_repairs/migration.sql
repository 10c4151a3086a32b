-- Operator repairs through the engine (issue 9, item 1; ADR 0016). The placeholder `repair_commands`
-- of 0001 was never written to: it is replaced by the engine's audit table of repair commands. One row
-- per command the engine decided (applied, or refused with nothing changed): who, what, which target,
-- the state it was drafted against, the state it found, the reason, and the idempotency key that
-- makes a resubmission return this row instead of acting twice.
DROP TABLE "sagaflow"."repair_commands";

CREATE TABLE "sagaflow"."repair_commands" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor" TEXT NOT NULL,
    "command" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "expected" JSONB NOT NULL,
    "actual" JSONB NOT NULL,
    "params" JSONB NOT NULL DEFAULT '{}',
    "result" JSONB NOT NULL,
    "reason" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "bulk_id" UUID,

    CONSTRAINT "repair_commands_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "repair_commands_idempotency_key_key" ON "sagaflow"."repair_commands"("idempotency_key");
CREATE INDEX "repair_commands_target_type_target_id_at_idx" ON "sagaflow"."repair_commands"("target_type", "target_id", "at");
CREATE INDEX "repair_commands_at_idx" ON "sagaflow"."repair_commands"("at");
CREATE INDEX "repair_commands_command_status_at_idx" ON "sagaflow"."repair_commands"("command", "status", "at");
