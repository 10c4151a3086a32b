-- A run page carries the run's stuck episodes whatever page of its events it holds (ADR 0035
-- addendum): the run's run.stuck / run.unstuck events, read through this index alone instead of
-- walking every event of the run (a handful of rows per run, not one per step).
-- The predicate is list-run-stuck-events.ts's filter, word for word.
CREATE INDEX "flow_events_run_stuck_idx" ON "sagaflow"."flow_events"("run_id", "id")
  WHERE "type" IN ('run.stuck', 'run.unstuck');
