-- The console's read API (ADR 0022): time series bucket rows of a bounded window read through an
-- index on the time column (runs finished, transitions, outbox messages published), and the audit
-- trail filters repairs and sign-in events by who acted without reading either table whole.
-- Runs started use the existing (created_at, id); anomalies (at) and (code, at); repairs (at).
CREATE INDEX "flow_runs_finished_at_status_idx" ON "sagaflow"."flow_runs"("finished_at", "status");
CREATE INDEX "process_transitions_at_idx" ON "sagaflow"."process_transitions"("at");
CREATE INDEX "outbox_published_at_idx" ON "sagaflow"."outbox"("published_at");
CREATE INDEX "repair_commands_actor_at_idx" ON "sagaflow"."repair_commands"("actor", "at");
CREATE INDEX "audit_events_actor_at_idx" ON "sagaflow"."audit_events"("actor", "at");
