'use client';

import { DetailFrame } from '@/ui/detail-frame';
import { DownloadHistoryLink } from '@/history/download-history-link';
import { useNow } from '@/ui/use-now';
import { InstanceFacts } from './instance-facts';
import { FailingTimeoutBanner, InstanceFailureBanner } from './instance-failure-banner';
import { InstanceLoadError } from './instance-load-error';
import { InstanceRepairs } from './instance-repairs';
import { InstanceStatusBadge } from './instance-status-badge';
import { KeptMessages } from './kept-messages';
import { OperatorCommands } from './operator-commands';
import { InstanceOutbox } from './instance-outbox';
import { PendingTimeouts } from './pending-work';
import { StateMachine } from './state-machine';
import { TransitionHistoryTable } from './transition-history-table';
import { useInstanceHistory } from './use-instance-history';
import './instances.css';

/**
 * One instance: why it stopped (if it did), facts, its repairs (for operators), the process's state
 * machine with where it is, history, kept messages, pending timeouts, outbox rows and the process's
 * commands; polls while not completed, for the instance and only the transitions newer than those
 * held; older transitions load a page at a time (ADR 0035).
 */
export function InstanceDetailView({ id }: { id: string }) {
  const now = useNow();
  const { query: detail, loadOlder, loading, loadError } = useInstanceHistory(id);
  return (
    <DetailFrame
      back={{ href: '/instances', label: 'All instances' }}
      query={detail}
      pendingLabel={`Loading instance ${id}…`}
      loadError={(error, retry) => <InstanceLoadError id={id} error={error} onRetry={retry} />}
    >
      {(data) => {
        const { instance, history, historyTruncated, operatorCommands, process } = data;
        return (
          <>
            <InstanceFailureBanner instance={instance} now={now} />
            <FailingTimeoutBanner instance={instance} now={now} />
            <div className="page-head">
              <h1 className="run-title">
                {instance.processName} <span className="mono">{instance.correlationKey}</span>{' '}
                <InstanceStatusBadge status={instance.status} testId="instance-status" />
              </h1>
              <span className="muted">
                {instance.status === 'COMPLETED' ? 'Completed · not refreshing' : 'Refreshing every 2 s'}
              </span>
            </div>
            {!process.registered ? (
              <p className="notice notice-warn">
                Process {instance.processName} is not registered with this control plane: its commands are unknown here.
              </p>
            ) : null}
            <InstanceFacts instance={instance} now={now} />
            <DownloadHistoryLink kind="instance" id={instance.id} />
            <InstanceRepairs detail={data} />
            {process.registered ? (
              <section id="state-machine">
                <h2>State machine</h2>
                <StateMachine detail={data} />
              </section>
            ) : null}
            <section id="history">
              <h2>History</h2>
              <TransitionHistoryTable
                history={history}
                older={{ more: historyTruncated, loading, error: loadError, load: () => void loadOlder() }}
              />
            </section>
            <KeptMessages history={history} />
            <PendingTimeouts timeouts={data.timeouts} now={now} />
            <InstanceOutbox outbox={data.outbox} now={now} />
            <section id="commands">
              <h2>Operator commands</h2>
              <OperatorCommands
                commands={operatorCommands}
                currentState={instance.currentState}
                status={instance.status}
              />
            </section>
          </>
        );
      }}
    </DetailFrame>
  );
}
