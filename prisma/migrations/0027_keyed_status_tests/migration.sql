-- The status test of a statement that finds its rows by a key (ADR 0098): a run or a step by its id,
-- a run's children by their parent, an outbox row, a timeout, an instance by its id. Written as a
-- plain `status in (...)`, such a test lets the planner read the rows through an index of that status
-- instead of the key (the open runs', the Running or Waiting steps', the pending outbox rows'): the
-- cheapest path while few rows have the status, and a read of every one of them per statement once
-- thousands pile up (an outage downstream) faster than an ANALYZE follows. As a call of this function
-- the test matches no index, and its cost (set high on purpose: one call is a few microseconds) tells
-- the planner a sequential scan would pay it for every row of the table, so the rows are read through
-- their key even by a plan made while the table was small. PostgreSQL calls the test after the
-- cheaper key comparison, so only for the rows the key found.
-- plpgsql, not SQL: a SQL function would be inlined as its expression, and its cost with it.
CREATE FUNCTION "sagaflow"."status_in"(status text, wanted text[]) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 10000 AS $$
BEGIN
  RETURN status = ANY (wanted);
END
$$;
