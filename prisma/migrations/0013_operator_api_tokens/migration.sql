-- Operator API tokens (ADR 0021): the CLI's credential. A token acts as its operator with the
-- operator's role at each request; only the sha-256 of the secret is kept (the secret is shown
-- once). Revoked and expired tokens stay as rows, so the audit trail can still name them.

-- CreateTable
CREATE TABLE "sagaflow"."api_tokens" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "operator_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "hint" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_by" TEXT NOT NULL,
    "last_used_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "revoked_by" TEXT,

    CONSTRAINT "api_tokens_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "api_tokens_secret_hash_key" ON "sagaflow"."api_tokens"("secret_hash");
CREATE INDEX "api_tokens_operator_id_created_at_idx" ON "sagaflow"."api_tokens"("operator_id", "created_at");

ALTER TABLE "sagaflow"."api_tokens" ADD CONSTRAINT "api_tokens_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "sagaflow"."operators"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A repair made with a token names it beside its operator (the actor).
ALTER TABLE "sagaflow"."repair_commands" ADD COLUMN "via" TEXT;
