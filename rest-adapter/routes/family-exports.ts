import type { RestRoute } from "./route";

/**
 * Family exports (docs/exports.md), as upstream's Api::V1::FamilyExportsController. The download,
 * GET /family_exports/{id}/download, redirects to a signed URL of the zip: it is served beside these
 * routes by src/finance/exports/family-export.router.ts, as a redirect is no GraphQL result.
 */
export const familyExportRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/family_exports",
    operation: "listFamilyExports",
    summary: "The family's exports, newest first, under data with meta paging (family administrators)",
    tag: "Family exports",
    resultPath: ["familyExports"],
    status: 200,
  },
  {
    method: "POST",
    path: "/family_exports",
    operation: "createFamilyExport",
    summary: "Ask for a zip of the family's data, written by a worker: 202 with the pending export under data",
    tag: "Family exports",
    refusesParameters: "Family export creation does not accept request parameters",
    resultPath: [],
    status: 202,
  },
  {
    method: "GET",
    path: "/family_exports/{id}",
    operation: "getFamilyExport",
    summary: "One export under data: status, filename, downloadable, download_path, file",
    tag: "Family exports",
    resultPath: [],
    status: 200,
  },
];
