#!/usr/bin/env node
// The npm registry this project's machines reach serves only the linux builds of packages that ship
// per-platform binaries (@swc/core-darwin-arm64 and the like answer 404), so `npm install` writes a
// package-lock.json without the other platforms' optional packages, and `npm ci` then refuses it as
// out of sync. This adds the missing entries, marked optional with their os/cpu, exactly as a lock
// written with full registry access lists them; npm skips them on other platforms and fetches them
// on theirs. Run it after every `npm install` that changes package-lock.json; .ci/run's `npm ci`
// fails loudly if it was forgotten.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const lockPath = path.join(__dirname, "..", "package-lock.json");
const lock = JSON.parse(fs.readFileSync(lockPath, "utf8"));
const packages = lock.packages;

const OS = ["darwin", "win32", "linux", "android", "freebsd", "openbsd", "netbsd", "sunos", "aix", "wasm32"];
const CPU = {
  arm64: "arm64",
  x64: "x64",
  ia32: "ia32",
  arm: "arm",
  ppc64: "ppc64",
  s390x: "s390x",
  riscv64: "riscv64",
  loong64: "loong64",
  universal: null,
  wasm32: "wasm32",
};

function platformOf(name) {
  const parts = name.split("/").pop().split("-");
  const os = parts.find((part) => OS.includes(part));
  const cpuPart = parts.find((part) => part in CPU);
  const entry = {};
  if (os && os !== "wasm32") entry.os = [os];
  if (cpuPart && CPU[cpuPart]) entry.cpu = [CPU[cpuPart]];
  if (parts.includes("musl")) entry.libc = ["musl"];
  else if (parts.includes("gnu") || parts.includes("gnueabihf")) entry.libc = ["glibc"];
  return entry;
}

/** npm resolves a dependency in the nearest node_modules up the tree; the hoisted place is the top one. */
function isInstalled(parentPath, name) {
  let dir = parentPath;
  for (;;) {
    if (packages[`${dir ? `${dir}/` : ""}node_modules/${name}`]) return true;
    if (!dir) return false;
    const index = dir.lastIndexOf("/node_modules/");
    dir = index === -1 ? "" : dir.slice(0, index);
  }
}

let added = 0;
for (const [parentPath, parent] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(parent.optionalDependencies ?? {})) {
    if (isInstalled(parentPath, name)) continue;
    const version = String(spec).replace(/^[\^~=]/, "");
    if (!/^\d+\.\d+\.\d+/.test(version)) continue;
    packages[`node_modules/${name}`] = { version, ...(parent.dev ? { dev: true } : {}), optional: true, ...platformOf(name) };
    added += 1;
  }
}

const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))));
lock.packages = sorted;
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: added ${added} optional platform entries`);
