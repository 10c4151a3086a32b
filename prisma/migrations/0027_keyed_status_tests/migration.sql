-- The status tests of the statements that find a run or a step by its key (ADR 0098). Written as a
-- plain `status in (...)`, such a test lets the planner read the row through the open runs' or the
-- Running steps' index instead of its key: the cheapest path while few are open, and a read of every
-- open run per statement once thousands open faster than an ANALYZE follows. As a call of one of
-- these functions the test matches no index, and its cost (set high on purpose: one call is a few
-- microseconds) tells the planner a sequential scan would pay it for every row of the table, so the
-- row is read through its key even from a plan made while the table was small. PostgreSQL calls the
-- test after the cheaper key comparison, so only for the rows the key found.
-- plpgsql, not SQL: a SQL function would be inlined as its expression, and its cost with it.
CREATE FUNCTION "sagaflow"."run_is_open"(status text) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 10000 AS $$
BEGIN
  RETURN status IN ('Pending', 'Running', 'Waiting', 'Compensating');
END
$$;

CREATE FUNCTION "sagaflow"."step_is_running"(status text) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 10000 AS $$
BEGIN
  RETURN status = 'Running';
END
$$;
