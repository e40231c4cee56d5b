// lint-as: src/transports/http/planted.ts
// expect: architecture/origin-read
// The rate limiter reading the request origin instead of its own request's address.
import { currentAuditContext } from "../../platform/common/audit-context";

export const clientIp = (): string | null => currentAuditContext().ipAddress;
