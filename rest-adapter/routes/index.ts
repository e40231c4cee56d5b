import { transactionRoutes } from "./transactions";
import { accountRoutes } from "./accounts";
import { categoryRoutes } from "./categories";
import { tagRoutes } from "./tags";
import { usageRoutes } from "./usage";
import { transferRoutes } from "./transfers";
import { holdingRoutes } from "./holdings";
import { investmentRoutes } from "./investments";
import { ledgerRoutes } from "./ledger";
import { bankingRoutes } from "./banking";
import { authRoutes } from "./auth";
import { merchantRoutes } from "./merchants";
import { chatRoutes } from "./chats";
import { auditRoutes } from "./audit";
import { planningRoutes } from "./planning";
import { userRoutes } from "./users";
import { importRoutes } from "./imports";
import { familyExportRoutes } from "./family-exports";
import type { RestRoute } from "./route";

export { API_PREFIX, type HttpMethod, type RestRoute } from "./route";
export { IMPORT_SETTING_KEYS, importUploadRoutes, type UploadRoute } from "./imports";

/** Every /api/v1 route, one file per feature, in the order of the OpenAPI document (and of matching). */
export const routes: RestRoute[] = [
  ...transactionRoutes,
  ...accountRoutes,
  ...categoryRoutes,
  ...tagRoutes,
  ...usageRoutes,
  ...transferRoutes,
  ...ledgerRoutes,
  ...holdingRoutes,
  ...investmentRoutes,
  ...bankingRoutes,
  ...authRoutes,
  ...merchantRoutes,
  ...chatRoutes,
  ...auditRoutes,
  ...planningRoutes,
  ...importRoutes,
  ...familyExportRoutes,
  ...userRoutes,
];
