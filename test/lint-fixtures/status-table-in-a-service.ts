// lint-as: src/audit/sso/planted-login.service.ts
// expect: architecture/status-at-edge
// A table of statuses beside the failures it answers (what sso-login.service.ts had): the edge maps codes.
export const FAILURE_STATUS = { state_mismatch: 400 };
