-- A release's audit row (outcome `repair`, detail `release`) stays at the state it found: lifting a
-- quarantine moves no state, and a release by retry has its message's own `applied` row for the move
-- (ADR 0101). The transitions counter and the overview's chart counted it as a self-transition. The
-- chart's partial index is rebuilt with the counted rows' predicate, which read-series.ts and
-- read-transition-counts.ts use word for word (counted-transitions.ts), so both stay index-only.
-- A repair row with no detail is still counted.
DROP INDEX "sagaflow"."process_transitions_counted_at_idx";
CREATE INDEX "process_transitions_counted_at_idx" ON "sagaflow"."process_transitions"("at", "process_name", "from_state", "to_state")
  WHERE "outcome" = 'applied' OR ("outcome" = 'repair' AND ("detail" ? 'release') IS NOT TRUE);
