// lint-as: src/finance/tags/planted.service.ts
// expect: architecture/status-at-edge
// A service choosing the HTTP status of its answer: it should throw a domain error instead.
export function refuse(res: { status(code: number): { json(body: unknown): void } }): void {
  res.status(404).json({ error: "not_found" });
}
