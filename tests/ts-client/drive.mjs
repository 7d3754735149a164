// Drives the machine's Chromium (headless, through playwright-core) through
// the test host page, and prints what the views showed as one JSON line:
//   node drive.mjs BASE_URL SCREENSHOT_PATH
// BASE_URL serves host.html, host.js, /everything/mcp and /fs/mcp.
import { chromium } from "playwright-core";

const [base, screenshot] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
const out = { console: [] };
try {
  const page = await browser.newPage({ viewport: { width: 800, height: 620 } });
  page.on("console", (m) => { if (m.type() === "error") out.console.push(m.text()); });
  page.on("pageerror", (e) => out.console.push(String(e)));
  const open = async (mcp, tool, args) => {
    const q = new URLSearchParams({ mcp, tool, args: JSON.stringify(args) });
    await page.goto(`${base}/host.html?${q}`);
    await page.waitForSelector("body[data-state=shown], body[data-state=failed]", { timeout: 30000 });
    if ((await page.getAttribute("body", "data-state")) === "failed") {
      throw new Error(`host failed: ${await page.textContent("#error")}`);
    }
    return page.frameLocator("#view");
  };
  const wait = { timeout: 15000 };

  // The counter: the view shows the tool's result, then its button calls
  // the app-only counter_increment through the host.
  let view = await open("/everything/mcp", "counter", {});
  out.counterTools = await page.textContent("#tools");
  await view.locator("#count", { hasText: /^\d+$/ }).waitFor(wait);
  out.counterShown = await view.locator("#count").textContent();
  await view.locator("#more:not([disabled])").click(wait);
  await view.locator("#count", { hasText: String(Number(out.counterShown) + 1) }).waitFor(wait);
  out.counterAfter = await view.locator("#count").textContent();

  // The file browser: list_dir's result, then browse, preview (the
  // app-only preview_file) and search from the view.
  view = await open("/fs/mcp", "list_dir", {});
  await view.locator("#listing tr").first().waitFor(wait);
  out.rootListing = await view.locator("#listing tr").evaluateAll((rows) => rows.map((r) => r.dataset.path));
  await view.locator('#listing tr[data-path="docs"]').click(wait);
  await view.locator('#listing tr[data-path="docs/notes.txt"]').waitFor(wait);
  out.docsListing = await view.locator("#listing tr").evaluateAll((rows) => rows.map((r) => r.dataset.path));
  await view.locator('#listing tr[data-path="docs/notes.txt"]').click(wait);
  await view.locator("#preview-text", { hasText: "milk" }).waitFor(wait);
  out.preview = await view.locator("#preview-text").textContent();
  await view.locator("#query").fill("milk");
  await view.locator("#go").click();
  await view.locator("#matches li").first().waitFor(wait);
  out.matches = await view.locator("#matches li").allTextContents();
  out.status = await view.locator("#status").textContent();
  await page.screenshot({ path: screenshot });
} catch (e) {
  out.error = String(e && e.stack ? e.stack : e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
