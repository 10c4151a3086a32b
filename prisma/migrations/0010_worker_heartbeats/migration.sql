-- Worker liveness (ADR 0010): each worker pool stamps its row on the database clock. A step Running
-- with no reclaim deadline whose claimed_by names a worker gone (stopped, or silent past
-- worker.dead_after_seconds) is stuck with a reason and can be reclaimed.

-- CreateTable
CREATE TABLE "sagaflow"."workers" (
    "id" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "heartbeat_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "stopped_at" TIMESTAMPTZ(3),

    CONSTRAINT "workers_pkey" PRIMARY KEY ("id")
);
