import { createContext, useContext, useState, type ReactNode } from "react";
import { formatInZone, savedZone, saveZone, zoneChoices } from "./time";

type ZoneState = { zone: string; setZone(zone: string): void };
const ZoneContext = createContext<ZoneState>({ zone: "UTC", setZone: () => undefined });

export function TimeZoneProvider({ children }: { children: ReactNode }) {
  const [zone, setZoneState] = useState(savedZone);
  const setZone = (next: string) => {
    saveZone(next);
    setZoneState(next);
  };
  return <ZoneContext.Provider value={{ zone, setZone }}>{children}</ZoneContext.Provider>;
}

export function useZone(): ZoneState {
  return useContext(ZoneContext);
}

export function TimeZonePicker() {
  const { zone, setZone } = useZone();
  return (
    <label className="zone-picker">
      <span>Time zone</span>
      <select value={zone} onChange={(event) => setZone(event.target.value)}>
        {zoneChoices().map((choice) => (
          <option key={choice} value={choice}>
            {choice}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A time in the chosen zone, with the UTC instant on hover. */
export function Time({ value }: { value: string }) {
  const { zone } = useZone();
  return (
    <time dateTime={value} title={`${new Date(value).toISOString().replace("T", " ").replace("Z", " UTC")}`}>
      {formatInZone(value, zone)}
    </time>
  );
}
