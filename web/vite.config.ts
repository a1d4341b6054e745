/// <reference types="vitest/config" />
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// The app is served by the gateway at `/`; `npm run dev` proxies the API to a local one.
const gateway = process.env["GPUX_API_URL"] ?? "http://127.0.0.1:8000";

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // Nothing inlined as data: URLs beyond what the page's CSP allows (images only).
    assetsInlineLimit: 0,
    sourcemap: true,
    chunkSizeWarningLimit: 600,
  },
  server: {
    proxy: { "/v1": { target: gateway, changeOrigin: true } },
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
