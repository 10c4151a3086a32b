'use client';

import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import type { AppRouter } from '@sagaflow/control';
import { useState, type ReactNode } from 'react';
import { shouldRetry } from './api-error';
import { TRPCProvider } from './trpc-context';

/** One QueryClient and tRPC client per browser tab; all calls go to this origin's /api/trpc. */
export function ConsoleProviders({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () => new QueryClient({ defaultOptions: { queries: { retry: shouldRetry, refetchOnWindowFocus: true } } }),
  );
  // At most 10 calls per request: the control plane refuses batches over SAGAFLOW_API_MAX_BATCH_SIZE (default 20).
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: '/api/trpc', maxItems: 10 })] }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
