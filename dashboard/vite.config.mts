import { resolve } from "node:path";
import { defineConfig } from "vite";

/**
 * The admin console and the GraphQL explorer, built into dist/admin as content-hashed files that the
 * service serves under /admin/ (see src/transports/http/admin-console.ts). `npm run dev:dashboard` serves the
 * same pages with Vite's dev server, proxying the API to a service on API_URL (default :3000).
 */
const api = globalThis.process?.env.API_URL ?? "http://127.0.0.1:3000";

export default defineConfig({
  root: import.meta.dirname,
  base: "/admin/",
  // Copied as is into the build: the icon the service serves at /favicon.ico.
  publicDir: "public",
  oxc: { jsx: { runtime: "automatic" } },
  build: {
    outDir: resolve(import.meta.dirname, "../dist/admin"),
    emptyOutDir: true,
    assetsDir: "assets",
    // Fonts and icons become files too, never data: URLs, so the CSP can stay at 'self'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 2000,
    rollupOptions: {
      input: { console: resolve(import.meta.dirname, "index.html"), explorer: resolve(import.meta.dirname, "explorer.html") },
      // GraphiQL's animation library marks its modules "use client" (a server-components hint, meaningless here).
      onLog(level, log, handler) {
        if (log.code === "MODULE_LEVEL_DIRECTIVE") return;
        handler(level, log);
      },
    },
  },
  server: {
    proxy: {
      "/graphql": { target: api, ws: true, changeOrigin: false },
      "/auth": api,
      "/oauth": api,
      "/api": api,
    },
  },
});
