import { join } from 'node:path';

/** Every cluster lives in `os.tmpdir()/sagaflow-pg-XXXXXX`; the reaper finds leftovers by this prefix. */
export const clusterDirPrefix = 'sagaflow-pg-';

/**
 * Where a cluster's files live inside its directory. The PostgreSQL data directory is a child rather
 * than the cluster directory itself because initdb wants an empty directory, and `owner.pid` must
 * exist from the first moment so a crash at any point leaves something the reaper can attribute.
 */
export interface ClusterLayout {
  /** `sagaflow-pg-XXXXXX`: removed as a whole on stop. */
  readonly clusterDir: string;
  /** PGDATA. */
  readonly dataDir: string;
  /** Unix-socket directory (`-k`). */
  readonly socketDir: string;
  /** pg_ctl's `-l` log; read back to explain a failed start. */
  readonly logFile: string;
  /** Pid of the process that started the cluster. */
  readonly ownerPidFile: string;
}

export function clusterLayout(clusterDir: string): ClusterLayout {
  const dataDir = join(clusterDir, 'data');
  return {
    clusterDir,
    dataDir,
    socketDir: join(clusterDir, 'sock'),
    logFile: join(dataDir, 'server.log'),
    ownerPidFile: join(clusterDir, 'owner.pid'),
  };
}
