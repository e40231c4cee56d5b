import type { ReactNode } from "react";

/** A form control with its visible label above it (the label element names the control). */
export function Field({ label, className, children }: { label: ReactNode; className?: string; children: ReactNode }) {
  return (
    <label className={className}>
      <span>{label}</span>
      {children}
    </label>
  );
}
