// lint-as: src/finance/tags/tag.router.ts
// expect: architecture/router-errors-through-edge
// A router writing its own error answer instead of sendError.
export function answer(res: { status(code: number): { json(body: unknown): void } }): void {
  res.status(403).json({ error: "forbidden", message: "no" });
}
