-- A run's history epoch (ADR 0085): an operator's repair that rewrites a run's step rows (retry,
-- complete, resume from a step) adds one, and a replay's next step transition, its finish and its
-- transactions write only while the epoch is still the one it loaded. A replay that read the steps
-- before the repair then stops instead of going on from what the repair undid. A constant default:
-- no table rewrite, whatever the number of runs.

ALTER TABLE "sagaflow"."flow_runs" ADD COLUMN "history_epoch" INTEGER NOT NULL DEFAULT 0;
