-- A run's or an instance's updated_at is never earlier than its created_at (ADR 0115), so a list
-- filtered by "not updated since <cutoff>" may also bound created_at by the cutoff and read the
-- (created_at, id) indexes from the cutoff down instead of walking every fresh row newest first.
-- Both columns are written from the business clock of whichever replica writes the row (ADR 0005):
-- a replica whose clock runs behind the one that created the row, or a clock stepped back, or an
-- import, would otherwise write an update before the creation. A row that would be written so gets
-- its created_at as its updated_at: the trigger fires only for such a row (its WHEN), so an
-- ordinary write evaluates one comparison and calls nothing.

CREATE FUNCTION "sagaflow"."updated_at_not_before_created_at"() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  NEW."updated_at" := NEW."created_at";
  RETURN NEW;
END
$$;

CREATE TRIGGER "flow_runs_updated_at_not_before_created_at"
  BEFORE INSERT OR UPDATE ON "sagaflow"."flow_runs"
  FOR EACH ROW WHEN (NEW."updated_at" < NEW."created_at")
  EXECUTE FUNCTION "sagaflow"."updated_at_not_before_created_at"();

CREATE TRIGGER "saga_instances_updated_at_not_before_created_at"
  BEFORE INSERT OR UPDATE ON "sagaflow"."saga_instances"
  FOR EACH ROW WHEN (NEW."updated_at" < NEW."created_at")
  EXECUTE FUNCTION "sagaflow"."updated_at_not_before_created_at"();

-- Rows written before this migration by skewed replicas are brought under the same rule (none on
-- an empty database or a fresh PGlite; one pass over each table otherwise).
UPDATE "sagaflow"."flow_runs" SET "updated_at" = "created_at" WHERE "updated_at" < "created_at";
UPDATE "sagaflow"."saga_instances" SET "updated_at" = "created_at" WHERE "updated_at" < "created_at";
