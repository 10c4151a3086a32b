-- A repair approved with an API token names that token on its audit row, as a repair made with one
-- does in `via` (review 31): an admin may create a token for any operator, so the approver's name
-- alone does not say who approved. Null for an approval given in a console session.
ALTER TABLE "sagaflow"."repair_commands" ADD COLUMN "approved_via" TEXT;
