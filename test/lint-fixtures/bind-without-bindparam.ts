// lint-as: src/finance/tags/planted.repository.ts
// expect: architecture/bind-param
// A placeholder numbered by hand.
export function limitClause(bind: unknown[], limit: number): string {
  return ` LIMIT $${bind.push(limit)}`;
}
