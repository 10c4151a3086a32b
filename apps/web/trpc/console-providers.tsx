'use client';

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import type { AppRouter } from '@sagaflow/control';
import { useState, type ReactNode } from 'react';
import { bounceIfSignedOut } from '@/auth/bounce-if-signed-out';
import { shouldRetry } from './api-error';
import { TRPCProvider } from './trpc-context';

/**
 * One QueryClient and tRPC client per browser tab; all calls go to this origin's /api/trpc. Any
 * call answered 401 (no session, or it ended: idle, absolute expiry, sign-out elsewhere, disabled)
 * sends the page to sign-in, which brings it back here afterwards.
 */
export function ConsoleProviders({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        queryCache: new QueryCache({ onError: bounceIfSignedOut }),
        mutationCache: new MutationCache({ onError: bounceIfSignedOut }),
        defaultOptions: { queries: { retry: shouldRetry, refetchOnWindowFocus: true } },
      }),
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
