'use client';

import { useRouter } from 'next/navigation';

/**
 * Goes to a list's address for a new filter as a history entry of its own (review 42): Back undoes the
 * filter change instead of leaving the list. Applying the filter already shown adds no entry. Paging
 * ("Load more", "Load older") stays out of the address and out of the history.
 */
export function useFilterNavigation(): (href: string) => void {
  const router = useRouter();
  return (href: string) => {
    const here = `${window.location.pathname}${window.location.search}`;
    if (new URL(href, window.location.href).href === new URL(here, window.location.href).href)
      router.replace(href, { scroll: false });
    else router.push(href, { scroll: false });
  };
}
