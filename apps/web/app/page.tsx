import type { Metadata } from 'next';
import { parseChartWindow } from '@/overview/chart-windows';
import { OverviewPage } from '@/overview/overview-page';

export const metadata: Metadata = { title: 'Overview' };

export default async function Home({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  return <OverviewPage window={parseChartWindow((await searchParams).window)} />;
}
