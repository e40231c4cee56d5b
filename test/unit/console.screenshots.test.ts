import fs from "node:fs";
import path from "node:path";
import { CONSOLE_SCREENSHOTS, SCREENSHOT_DIR } from "../helpers/screenshots";

const ROOT = path.join(__dirname, "..", "..");
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

test("every console screenshot is committed as a PNG, the manual shows each, and nothing else lies in docs/console", () => {
  // The README shows one; the pages of docs/ link the others relative to themselves.
  const manual = [
    fs.readFileSync(path.join(ROOT, "README.md"), "utf8").replace(/\]\(docs\/console\//g, "](console/"),
    ...fs
      .readdirSync(path.join(ROOT, "docs"))
      .filter((name) => name.endsWith(".md"))
      .map((name) => fs.readFileSync(path.join(ROOT, "docs", name), "utf8")),
  ].join("\n");
  for (const name of CONSOLE_SCREENSHOTS) {
    const file = path.join(SCREENSHOT_DIR, name);
    expect({ name, exists: fs.existsSync(file) }).toEqual({ name, exists: true });
    const image = fs.readFileSync(file);
    expect(image.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    // Width and height (IHDR): a real screen, not an empty image.
    expect(image.readUInt32BE(16)).toBeGreaterThanOrEqual(768);
    expect(image.readUInt32BE(20)).toBeGreaterThanOrEqual(600);
    expect({ name, shown: manual.includes(`](console/${name})`) }).toEqual({ name, shown: true });
  }
  expect(fs.readdirSync(SCREENSHOT_DIR).sort()).toEqual([...CONSOLE_SCREENSHOTS].sort());
});

test("console tests write the committed screenshots only when asked (npm run docs:screenshots)", () => {
  const scripts = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts as Record<string, string>;
  expect(scripts["docs:screenshots"]).toContain("CONSOLE_SCREENSHOTS=1");
  const e2e = path.join(ROOT, "test", "e2e");
  for (const file of fs.readdirSync(e2e).filter((name) => name.startsWith("console."))) {
    const source = fs.readFileSync(path.join(e2e, file), "utf8");
    // Every screenshot into docs/ goes through documentationScreenshot, which writes only under CONSOLE_SCREENSHOTS=1.
    expect({ file, writesDocs: /docs["'`/,\s]+console|SCREENSHOT_DIR/.test(source) }).toEqual({ file, writesDocs: false });
  }
});
