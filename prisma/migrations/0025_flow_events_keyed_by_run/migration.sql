-- One index per flow event instead of two (issue 11, ADR 0054). flow_events had a primary key on
-- (id) and an index on (run_id, id), so each of a flow's nine events wrote two entries. Every
-- statement that reads flow_events names its run (the history pages and counts, the run's last
-- stuck event, the finish's outcome check, retention's delete, the kick's read-back), and the
-- sequence alone keeps id unique; so the key becomes (run_id, id) and the index it duplicates goes.
-- The key's index is rebuilt inside the migration's transaction, as 0024's indexes were.

ALTER TABLE "sagaflow"."flow_events" DROP CONSTRAINT "flow_events_pkey";
DROP INDEX "sagaflow"."flow_events_run_id_id_idx";
ALTER TABLE "sagaflow"."flow_events" ADD CONSTRAINT "flow_events_pkey" PRIMARY KEY ("run_id", "id");
