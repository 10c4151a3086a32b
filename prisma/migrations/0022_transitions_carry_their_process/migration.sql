-- The overview's transitions chart counts by process (ADR 0040). Each transition now carries its
-- instance's process name, which never changes, so the chart no longer looks up an instance per
-- transition in its window (33 k lookups for 24 h at a million runs: most of the charts' time).

-- The chart's partial index held the instance to look the process up by; it is rebuilt below with
-- the process instead. Dropped first, so the fill below does not update it row by row.
DROP INDEX "sagaflow"."process_transitions_counted_at_idx";

-- Added without a default, so adding it rewrites nothing; the existing rows are then filled in one
-- statement. Batches would not help here: every migration of a `migrate` call shares one
-- transaction, and a single join of each transition to its instance is the cheapest way to write
-- them all (nothing to do on an empty database or a fresh PGlite; figures at a million in ADR 0040).
ALTER TABLE "sagaflow"."process_transitions" ADD COLUMN "process_name" TEXT;
UPDATE "sagaflow"."process_transitions" t
   SET "process_name" = i."process_name"
  FROM "sagaflow"."saga_instances" i
 WHERE i."id" = t."instance_id";
-- Every transition belongs to an instance (the foreign key), so none is left empty; from here on a
-- transition the chart cannot place cannot be written.
ALTER TABLE "sagaflow"."process_transitions" ALTER COLUMN "process_name" SET NOT NULL;

-- A worker still running the engine of before this migration (a rolling upgrade) writes transitions
-- without the name: they get their instance's, looked up by primary key, instead of failing its
-- deliveries until it is restarted. The trigger fires only for such a row (its WHEN): this engine's
-- own inserts always carry the name and never run it.
CREATE FUNCTION "sagaflow"."process_transitions_fill_process_name"() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  SELECT i."process_name" INTO NEW."process_name" FROM "sagaflow"."saga_instances" i WHERE i."id" = NEW."instance_id";
  RETURN NEW;
END
$$;
CREATE TRIGGER "process_transitions_fill_process_name"
  BEFORE INSERT ON "sagaflow"."process_transitions"
  FOR EACH ROW WHEN (NEW."process_name" IS NULL)
  EXECUTE FUNCTION "sagaflow"."process_transitions_fill_process_name"();

-- Each bucket of the chart is an index-only read grouped by (process, from, to), with no other
-- table. The predicate is read-series.ts's filter, word for word.
CREATE INDEX "process_transitions_counted_at_idx" ON "sagaflow"."process_transitions"("at", "process_name", "from_state", "to_state")
  WHERE "outcome" IN ('applied', 'repair');
