/** Page-number paging as docs/rest-compat.md describes it: clamps instead of failing. */
export type PageRequest = { page: number; perPage: number };

export type PageInfo = { page: number; perPage: number; totalCount: number; totalPages: number };

export const MAX_PER_PAGE = 100;

export function clampPage(page: number | null | undefined, perPage: number | null | undefined, defaultPerPage: number): PageRequest {
  const safePage = Number.isInteger(page) && (page as number) >= 1 ? (page as number) : 1;
  let safePerPage = Number.isInteger(perPage) ? (perPage as number) : defaultPerPage;
  if (safePerPage < 1) safePerPage = defaultPerPage;
  return { page: safePage, perPage: Math.min(safePerPage, MAX_PER_PAGE) };
}

/** An empty list is still one (empty) page: upstream's pagination (pagy) never counts fewer, and its clients read it so. */
export function pageInfo(request: PageRequest, totalCount: number): PageInfo {
  return {
    page: request.page,
    perPage: request.perPage,
    totalCount,
    totalPages: Math.max(1, Math.ceil(totalCount / request.perPage)),
  };
}

export function offsetOf(request: PageRequest): number {
  return (request.page - 1) * request.perPage;
}
