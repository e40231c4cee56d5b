#!/usr/bin/env node
"use strict";
// graphql-js runs extra development-time checks on every type test unless NODE_ENV is production.
process.env.NODE_ENV ||= "production";
require("../dist/src/app/main.js")
  .main(process.argv.slice(2))
  .catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
