-- Sign-in, roles and the audit trail (issue 9, item 2; ADR 0015). The control plane's tables stay in
-- the engine's `sagaflow` schema: one migration runner, one bookkeeping table, one Prisma client.

-- An operator signs in with a name (not necessarily an e-mail address): the first admin is "admin".
ALTER TABLE "sagaflow"."operators" RENAME COLUMN "email" TO "name";
ALTER INDEX "sagaflow"."operators_email_key" RENAME TO "operators_name_key";
ALTER TABLE "sagaflow"."operators" ADD COLUMN "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- Sessions are server-side rows keyed by the token's hash. SameSite=Strict cookies and the Origin
-- check replace a per-session CSRF token; signing out or disabling an operator deletes its rows.
ALTER TABLE "sagaflow"."sessions" DROP COLUMN "csrf_token";
ALTER TABLE "sagaflow"."sessions" ADD COLUMN "address" TEXT;
ALTER TABLE "sagaflow"."sessions" DROP CONSTRAINT "sessions_operator_id_fkey";
ALTER TABLE "sagaflow"."sessions" ADD CONSTRAINT "sessions_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "sagaflow"."operators"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The audit trail: who did what to which target, with what outcome and why. Sign-ins, sign-outs and
-- operator changes now; repair commands later. Failed sign-ins are also what the rate limit counts.
CREATE TABLE "sagaflow"."audit_events" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor_id" UUID,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target_type" TEXT,
    "target_id" TEXT,
    "outcome" TEXT NOT NULL,
    "reason" TEXT,
    "address" TEXT,
    "details" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "audit_events_at_idx" ON "sagaflow"."audit_events"("at");
CREATE INDEX "audit_events_actor_id_at_idx" ON "sagaflow"."audit_events"("actor_id", "at");
CREATE INDEX "audit_events_target_type_target_id_at_idx" ON "sagaflow"."audit_events"("target_type", "target_id", "at");
CREATE INDEX "audit_events_action_outcome_address_at_idx" ON "sagaflow"."audit_events"("action", "outcome", "address", "at");
