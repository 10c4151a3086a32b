import type { WorkerPoolCounters } from '@sagaflow/engine';

/**
 * One of the compared workflow systems, as the harness drives it; 'Floor' is the hand-written floor
 * at one client (floor-peer.ts), not a workflow system.
 */
export interface PeerSystem {
  readonly name: 'Sagaflow' | 'DBOS' | 'Floor';
  /**
   * Creates database `name` holding the system's schema and nothing else, for each phase to clone,
   * so no phase's statements include schema creation.
   */
  prepareTemplate(adminUrl: string, name: string): Promise<void>;
  /** Connects to `url` with `concurrency` flows allowed at once (and a pool of `concurrency + 4`). */
  open(url: string, concurrency: number): Promise<OpenPeer>;
}

export interface OpenPeer {
  /** Starts the 3-step no-op flow and resolves once it is durably finished; rejects if it did not complete. */
  runOne(n: number): Promise<void>;
  /** Stops workers and closes every connection. */
  close(): Promise<void>;
  /** Sagaflow only: its worker pool's counters so far (ADR 0038 addendum). */
  poolCounters?(): WorkerPoolCounters | null;
}

/** Connections per pool beyond the flows in flight: the engine's job claimer, starters, DBOS's own. */
export const spareConnections = 4;
