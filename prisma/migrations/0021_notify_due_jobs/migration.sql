-- Worker pools wake on a notification instead of waiting for their next poll (ADR 0038). Every
-- statement that queues a job due now sends one NOTIFY per job kind on channel `sagaflow_jobs`, in
-- its own transaction: PostgreSQL delivers it at the commit, never for a rolled-back insert, and
-- folds repeats within a transaction into one. A trigger, not a call beside each insert, because
-- jobs are queued from a dozen places (starts, signals, retries, timers, repairs, the doctor's and
-- the sweeps' set-based statements): none can forget it and none pays a round trip for it.
-- Left out: a wake already leased to the worker that will run it (a start's hand-off, ADR 0029),
-- and a job due later (a timer, a retry's backoff, a run-timeout backstop), which the poll finds.
-- The second of slack lets a host whose clock runs a little ahead of the server's still notify.
CREATE FUNCTION "sagaflow"."notify_due_jobs"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('sagaflow_jobs', d.kind)
     FROM (SELECT DISTINCT kind FROM added
            WHERE locked_by IS NULL AND available_at <= clock_timestamp() + interval '1 second') d;
  RETURN NULL;
END
$$;

CREATE TRIGGER "jobs_notify_due" AFTER INSERT ON "sagaflow"."jobs"
  REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION "sagaflow"."notify_due_jobs"();
