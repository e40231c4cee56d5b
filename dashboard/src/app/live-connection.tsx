import { createContext, useContext } from "react";
import type { createConsoleClient } from "./client";

type Connection = ReturnType<typeof createConsoleClient>;
const LiveConnectionContext = createContext<Connection | null>(null);

export const LiveConnectionProvider = LiveConnectionContext.Provider;

export function useLiveConnection(): Connection {
  const connection = useContext(LiveConnectionContext);
  if (!connection) throw new Error("useLiveConnection outside LiveConnectionProvider");
  return connection;
}
