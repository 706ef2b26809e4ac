/** The `page` parameter of the lists and the audit log, and the paging headers of their answers. */
import { ApiError } from './errors.js';
import { MAX_PAGE, PAGE_SIZE } from './limits.js';

/**
 * The page a request asks for: absent → 1; otherwise plain decimal digits from 1 to 200 (≠ the reference, which
 * reads `1e2`, `0x10`, ` 5` and clamps 0). Anything else → 400 invalid_page.
 */
export function parsePage(raw: string | undefined | null): number {
  if (raw === undefined || raw === null) return 1;
  const page = /^[0-9]{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(page >= 1 && page <= MAX_PAGE)) {
    throw new ApiError('invalid_page', `The page parameter must be an integer from 1 to ${MAX_PAGE}.`);
  }
  return page;
}

/** `X-Total-Count` and `Link` (rel next/prev, absolute URLs) for one page of a list at `url`. */
export function pagingHeaders(url: string, page: number, total: number, perPage = PAGE_SIZE): Record<string, string> {
  const headers: Record<string, string> = { 'X-Total-Count': String(total) };
  const lastPage = Math.min(Math.max(1, Math.ceil(total / perPage)), MAX_PAGE);
  const links: string[] = [];
  if (page < lastPage) links.push(`<${url}?page=${page + 1}>; rel="next"`);
  if (page > 1) links.push(`<${url}?page=${Math.min(page - 1, lastPage)}>; rel="prev"`);
  if (links.length > 0) headers.Link = links.join(', ');
  return headers;
}
