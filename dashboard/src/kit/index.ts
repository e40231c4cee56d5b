/** The console's own components: every page builds its tables, fields, confirmations and errors from these. */
export { ConfirmButton } from "./ConfirmButton";
export { DataTable, type Column } from "./DataTable";
export { Field } from "./Field";
export { plural } from "./plural";
export { QrCode } from "./QrCode";
export { OutcomeLine, Problem, problemOf, useActionOutcome, type Outcome } from "./problem";
export { useMediaQuery } from "./use-media-query";
