-- A timeout belongs to the state visit that armed it, not to the state's name (issue 13, item 4):
-- an instance that left a state and came back is in a new visit, and the old visit's timeouts are
-- stale there.

-- How many times the instance has entered a state; a transition to the state it is in stays in the visit.
ALTER TABLE "sagaflow"."saga_instances" ADD COLUMN "state_visit" INTEGER NOT NULL DEFAULT 0;

-- The visit a timeout was armed in. Timeouts armed before this migration: one that expects the
-- state its instance is in now belongs to this (visit 0); any other was armed in a visit the
-- instance has left, and stays a no-op if the instance comes back (visit -1 is never reached).
ALTER TABLE "sagaflow"."process_timeouts" ADD COLUMN "armed_visit" INTEGER;
UPDATE "sagaflow"."process_timeouts" t
   SET "armed_visit" = CASE WHEN EXISTS (SELECT 1 FROM "sagaflow"."saga_instances" i
                                          WHERE i.id = t.instance_id AND i.current_state = t.expected_state)
                            THEN 0 ELSE -1 END;
ALTER TABLE "sagaflow"."process_timeouts" ALTER COLUMN "armed_visit" SET NOT NULL;
