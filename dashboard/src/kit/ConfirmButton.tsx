import type { ButtonHTMLAttributes } from "react";

type Props = Omit<ButtonHTMLAttributes<HTMLButtonElement>, "onClick" | "type"> & {
  /** What the browser asks before acting. */
  question: string;
  /** Ask for a reason (recorded with the action) instead of a yes or no; an empty answer is null. */
  reason?: boolean;
  onConfirm(reason: string | null): void;
};

/** A button for something that cannot be taken back: it acts only once the person confirms. */
export function ConfirmButton({ question, reason, onConfirm, children, ...rest }: Props) {
  return (
    <button
      type="button"
      {...rest}
      onClick={() => {
        if (reason) {
          const answer = window.prompt(question, "");
          if (answer !== null) onConfirm(answer || null);
        } else if (window.confirm(question)) onConfirm(null);
      }}
    >
      {children}
    </button>
  );
}
