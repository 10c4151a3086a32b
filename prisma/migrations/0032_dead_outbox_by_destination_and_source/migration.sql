-- The Dead outbox rows of one destination (`outbox.dead` with a destination: the console's Dead list,
-- `sagaflow requeue --dead --destination D`) and of one instance (`sagaflow requeue --instance`, the
-- instance page's Dead rows), longest dead first (review 48, ADR 0122). Without them a page of one
-- destination's Dead rows read every row of the table (a Seq Scan) after an outage of another destination.
-- Partial on 'Dead': the publisher's writes (a Pending row inserted, claimed, failed, marked Published)
-- never satisfy the predicate, so they add no entry here; only a row's death (its last failure) and a
-- requeue (Dead -> Pending, a new heap tuple without an entry) touch them.
CREATE INDEX "outbox_dead_destination_available_at_id_idx" ON "sagaflow"."outbox"("destination", "available_at", "id")
  WHERE "status" = 'Dead';
CREATE INDEX "outbox_dead_source_id_available_at_id_idx" ON "sagaflow"."outbox"("source_id", "available_at", "id")
  WHERE "status" = 'Dead';
