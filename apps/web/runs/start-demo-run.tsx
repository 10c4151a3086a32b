'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { apiErrorInfo } from '@/trpc/api-error';
import { useTRPC } from '@/trpc/trpc-context';
import { newOrderId } from './new-order-id';

/** Starts one `demo.order` run and links to it. */
export function StartDemoRun() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const start = useMutation(
    trpc.runs.start.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.runs.page.pathFilter()),
    }),
  );
  const onClick = () => {
    const orderId = newOrderId();
    const amount = Math.round(Math.random() * 20_000) / 100;
    start.mutate({
      flowName: 'demo.order',
      input: { orderId, amount },
      businessKey: orderId,
      tags: ['demo', 'console'],
    });
  };
  return (
    <div className="start-run">
      <button type="button" className="primary" onClick={onClick} disabled={start.isPending}>
        {start.isPending ? 'Starting…' : 'Start demo run'}
      </button>
      {start.isSuccess ? (
        <p className="notice notice-ok" role="status">
          Started run <code>{start.data.runId}</code>.{' '}
          <Link href={`/runs/${start.data.runId}`} data-testid="started-run-link">
            Open it →
          </Link>
        </p>
      ) : null}
      {start.isError ? (
        <p className="notice notice-bad" role="alert">
          Could not start a demo run: {apiErrorInfo(start.error).message}
        </p>
      ) : null}
    </div>
  );
}
