import { hasUrlCredentials, maskUrl } from "../../src/audit/streaming/destination-url";

describe("a destination URL's credentials", () => {
  test("are masked: user and password, and query parameters that carry a credential", () => {
    expect(maskUrl("https://user:pass@siem.example/in?token=abc&region=eu")).toBe("https://***:***@siem.example/in?token=***&region=eu");
    expect(maskUrl("https://blob.example/c?sv=2024&sig=Zm9v%2B&api_key=1&access_token=2")).toBe(
      "https://blob.example/c?sv=2024&sig=***&api_key=***&access_token=***",
    );
    expect(maskUrl("https://only-user@siem.example/")).toBe("https://***@siem.example/");
  });

  test("a URL without credentials (or not a URL) stays exactly as written", () => {
    for (const url of ["https://siem.example/services/collector?channel=abc", "syslog+tls://10.0.0.1:6514", "not a url"]) {
      expect(maskUrl(url)).toBe(url);
      expect(hasUrlCredentials(url)).toBe(false);
    }
    expect(hasUrlCredentials("https://h.example/?key=1")).toBe(true);
  });
});
