-- Retention (ADR 0027) walks old rows oldest first by keyset, (time, key) > the last row it deleted:
-- an index on the whole key lets a batch start at the cursor and stop after its limit, where an
-- index on the time alone makes it read and sort every row of a shared timestamp again per batch.
-- Finished runs already have (finished_at, status) and published outbox rows (published_at).
-- process_transitions (at, id) serves every query (at) served (ADR 0022's series) and replaces it.
DROP INDEX "sagaflow"."process_transitions_at_idx";
CREATE INDEX "process_transitions_at_id_idx" ON "sagaflow"."process_transitions"("at", "id");
CREATE INDEX "inbox_received_at_consumer_message_id_idx" ON "sagaflow"."inbox"("received_at", "consumer", "message_id");
