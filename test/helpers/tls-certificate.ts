import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export type TestCertificate = { key: string; cert: string };

/**
 * A self-signed certificate for `names` (DNS names and IP addresses), made by the openssl CLI, so the
 * loopback fakes can speak TLS and a client that trusts only this certificate (passed as `ca`)
 * proves its SNI and hostname checks work.
 */
export function selfSignedCertificate(names: string[]): TestCertificate {
  const dir = mkdtempSync(path.join(tmpdir(), "fg-cert-"));
  try {
    const altNames = names.map((name) => (/^[\d.]+$|:/.test(name) ? `IP:${name}` : `DNS:${name}`)).join(",");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "2",
        "-subj",
        `/CN=${names[0]}`,
        "-addext",
        `subjectAltName=${altNames}`,
        "-keyout",
        path.join(dir, "key.pem"),
        "-out",
        path.join(dir, "cert.pem"),
      ],
      { stdio: "pipe" },
    );
    return { key: readFileSync(path.join(dir, "key.pem"), "utf8"), cert: readFileSync(path.join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
