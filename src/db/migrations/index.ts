import type { MigrationContext } from "../migrator";
import * as foundation from "./0001-foundation";
import * as audit from "./0003-audit";

export type Migration = { name: string; up: (context: MigrationContext) => Promise<void> };

/** Every migration, in order. Listed explicitly so they run the same from src/ (tests) and dist/. */
export const migrations: Migration[] = [
  { name: "0001-foundation", up: foundation.up },
  { name: "0003-audit", up: audit.up },
];
