-- The runs list filtered by flow (ADR 0035): "newest first" orders one flow's runs by
-- (created_at, id) and "stalest first" by (updated_at, id). The (flow_name, status, updated_at)
-- index fits neither without a status, so at scale the planner read every run of the flow and
-- sorted them. Both keyset orders get an index led by the flow. A run's history pages (steps by
-- sequence, compensations by level and ordinal, events by id) and an instance's transitions (by id)
-- already have the unique or (parent, id) index their keyset reads need.
CREATE INDEX "flow_runs_flow_name_created_at_id_idx" ON "sagaflow"."flow_runs"("flow_name", "created_at", "id");
CREATE INDEX "flow_runs_flow_name_updated_at_id_idx" ON "sagaflow"."flow_runs"("flow_name", "updated_at", "id");
