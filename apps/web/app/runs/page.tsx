import type { Metadata } from 'next';
import { parseRunsFilter } from '@/runs/runs-filter';
import { RunsList } from '@/runs/runs-list';

export const metadata: Metadata = { title: 'Runs' };

export default async function RunsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  return <RunsList filter={parseRunsFilter(await searchParams)} />;
}
