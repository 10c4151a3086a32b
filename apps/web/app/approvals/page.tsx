import type { Metadata } from 'next';
import { ApprovalsQueue } from '@/approvals/approvals-queue';

export const metadata: Metadata = { title: 'Approvals' };

export default async function ApprovalsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const id = typeof params.id === 'string' ? params.id : null;
  return <ApprovalsQueue view={params.view === 'decided' ? 'decided' : 'pending'} highlight={id} />;
}
