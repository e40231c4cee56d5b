import { useMemo } from "react";
import { create } from "qrcode";

/**
 * A QR code drawn in the page (one SVG path, dark modules on a white quiet zone): nothing is fetched,
 * and the console's CSP (images only from its own origin) has nothing to allow.
 */
export function QrCode({ text, label, className }: { text: string; label: string; className?: string }) {
  const { size, path } = useMemo(() => {
    const { modules } = create(text, { errorCorrectionLevel: "M" });
    const parts: string[] = [];
    for (let row = 0; row < modules.size; row += 1) {
      for (let col = 0; col < modules.size; col += 1) if (modules.get(row, col)) parts.push(`M${col + 2} ${row + 2}h1v1h-1z`);
    }
    return { size: modules.size + 4, path: parts.join("") };
  }, [text]);
  return (
    <svg className={className ?? "qr-code"} role="img" aria-label={label} viewBox={`0 0 ${size} ${size}`} shapeRendering="crispEdges">
      <rect width={size} height={size} fill="#ffffff" />
      <path d={path} fill="#000000" />
    </svg>
  );
}
