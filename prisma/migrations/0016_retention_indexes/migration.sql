-- Retention (ADR 0027): old inbox records are found, oldest first, through an index on the time they
-- were received, as finished runs are through (finished_at, status), finished instances' transitions
-- through (at) and published outbox rows through (published_at), which exist already.
CREATE INDEX "inbox_received_at_idx" ON "sagaflow"."inbox"("received_at");
