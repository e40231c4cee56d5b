#!/usr/bin/env node
"use strict";
require("../dist/src/main.js")
  .main(process.argv.slice(2))
  .catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
