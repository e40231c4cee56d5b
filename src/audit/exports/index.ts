/** What other features use of audit exports: the signed download URLs and the line framing of streamed exports. */
export { DownloadSigner, type DownloadCheck } from "./signed-url";
export { FRAMINGS, LineFramer } from "./export-formats";
