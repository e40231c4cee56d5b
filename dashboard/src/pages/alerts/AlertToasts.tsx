import { print } from "graphql";
import { useEffect, useState } from "react";
import { useLiveConnection } from "../../app/live-connection";
import { AlertFiredDocument, type AlertFiredSubscription } from "../../gql/graphql";

type Toast = AlertFiredSubscription["alertFired"];

/** Pages that show firings listen for this to refresh. */
export const ALERT_FIRED_EVENT = "finance-gateway:alert-fired";
const TOAST_MS = 15_000;

/**
 * A toast on every console page when an alert fires (the alertFired subscription). Shown while the
 * console is open; the firing history keeps every firing whether anyone was looking or not.
 */
export function AlertToasts() {
  const { socket } = useLiveConnection();
  const [toasts, setToasts] = useState<Toast[]>([]);
  useEffect(() => {
    const timers = new Set<ReturnType<typeof setTimeout>>();
    const unsubscribe = socket.subscribe(
      { query: print(AlertFiredDocument) },
      {
        next: (message) => {
          const firing = (message.data as AlertFiredSubscription | null | undefined)?.alertFired;
          if (!firing) return;
          setToasts((current) => [...current.slice(-4), firing]);
          window.dispatchEvent(new CustomEvent(ALERT_FIRED_EVENT));
          const timer = setTimeout(() => {
            timers.delete(timer);
            setToasts((current) => current.filter((toast) => toast.id !== firing.id));
          }, TOAST_MS);
          timers.add(timer);
        },
        error: () => undefined,
        complete: () => undefined,
      },
    );
    return () => {
      unsubscribe();
      for (const timer of timers) clearTimeout(timer);
    };
  }, [socket]);
  if (toasts.length === 0) return null;
  return (
    <div className="toasts" role="status" aria-live="assertive">
      {toasts.map((toast) => (
        <div className="toast" key={toast.id}>
          <strong>Alert: {toast.ruleName}</strong>
          <span>{toast.summary}</span>
          <button
            type="button"
            aria-label={`Dismiss alert ${toast.ruleName}`}
            onClick={() => setToasts((current) => current.filter((other) => other.id !== toast.id))}
          >
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
