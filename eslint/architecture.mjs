import path from "node:path";

/**
 * The import rules of docs/architecture.md that a selector cannot express, because they depend on
 * where the importing file and the imported file live: the layers (platform ← transports ← features ←
 * app, no import upward) and feature entry files (a feature reaches another only through its
 * `index.ts`). Paths are resolved from the importing file, so `../../finance/x` and `../x` are judged
 * by what they name, not by how they are spelled. Type-only imports count: a type names its module too.
 */

const ROOT = path.resolve(import.meta.dirname, "..");

/** Layers, lowest first; a file may import its own layer and those below it. */
const LAYERS = [
  { name: "platform", folders: ["src/platform"] },
  { name: "transports", folders: ["src/transports", "rest-adapter"] },
  { name: "features", folders: ["src/finance", "src/audit"] },
  { name: "app", folders: ["src/app", "workers"] },
];

/** The groups whose folders are features: one level inside each is one feature. */
const FEATURE_GROUPS = ["src/finance", "src/audit"];

/** Repository-relative path of a file, with `/` separators; null outside the repository. */
export function repoPath(file) {
  const relative = path.relative(ROOT, file).split(path.sep).join("/");
  return relative.startsWith("..") ? null : relative;
}

function inside(file, folder) {
  return file === folder || file.startsWith(`${folder}/`);
}

export function layerOf(file) {
  const index = LAYERS.findIndex((layer) => layer.folders.some((folder) => inside(file, folder)));
  return index < 0 ? null : { index, name: LAYERS[index].name };
}

/** `src/finance/tags` for `src/finance/tags/tag.service`; null outside a feature. */
export function featureOf(file) {
  const group = FEATURE_GROUPS.find((folder) => inside(file, folder));
  if (!group) return null;
  const rest = file.slice(group.length + 1).split("/");
  return rest.length > 1 ? `${group}/${rest[0]}` : null;
}

/** The repository path an import names (without extension), or null for a package. */
function target(fromFile, specifier) {
  if (!specifier.startsWith(".")) return null;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), specifier));
  return resolved.replace(/\.(ts|js|mjs|cjs)$/, "").replace(/\/index$/, "");
}

function onImports(context, check) {
  const file = repoPath(context.filename);
  if (!file) return {};
  const visit = (node, source) => {
    if (!source || typeof source.value !== "string") return;
    const named = target(file, source.value);
    if (named) check(node, file, named);
  };
  return {
    ImportDeclaration: (node) => visit(node, node.source),
    ExportNamedDeclaration: (node) => visit(node, node.source),
    ExportAllDeclaration: (node) => visit(node, node.source),
    ImportExpression: (node) => visit(node, node.source),
    TSImportType: (node) => visit(node, node.argument?.literal ?? node.argument),
    "CallExpression[callee.name='require']": (node) => visit(node, node.arguments[0]),
  };
}

const layers = {
  meta: {
    type: "problem",
    docs: { description: "platform ← transports ← features ← app: no import runs upward" },
    messages: {
      upward:
        "{{from}} ({{fromLayer}}) imports {{to}} ({{toLayer}}): imports only run down (platform ← transports ← features ← app). Inject it, or move the shared part down.",
      catalogue: "The event catalogue imports no feature: declare the payload's fields in src/platform/events/catalogue.ts.",
    },
    schema: [],
  },
  create(context) {
    return onImports(context, (node, file, named) => {
      const from = layerOf(file);
      const to = layerOf(named);
      if (!from || !to || to.index <= from.index) return;
      if (inside(file, "src/platform/events")) return context.report({ node, messageId: "catalogue" });
      context.report({ node, messageId: "upward", data: { from: file, fromLayer: from.name, to: named, toLayer: to.name } });
    });
  },
};

const featureEntry = {
  meta: {
    type: "problem",
    docs: { description: "a feature reaches another only through that feature's entry file (its index.ts)" },
    messages: {
      entry: "{{from}} reaches into {{feature}} ({{to}}): import it from the feature's entry file, {{feature}}/index.ts.",
    },
    schema: [],
  },
  create(context) {
    return onImports(context, (node, file, named) => {
      const from = featureOf(file);
      const to = featureOf(named) ?? (FEATURE_GROUPS.some((group) => inside(named, group)) ? named : null);
      if (!from || !to || from === to) return;
      if (named === to) return; // the feature folder itself: its index.ts
      context.report({ node, messageId: "entry", data: { from: file, feature: to, to: named } });
    });
  },
};

/**
 * A rule made of AST selectors, like `no-restricted-syntax`, under its own name, so each convention is
 * switched on and off by its own file globs instead of one list that every override must repeat.
 */
function restricted(description, selectors) {
  return {
    meta: { type: "problem", docs: { description }, schema: [] },
    create(context) {
      return Object.fromEntries(selectors.map(({ selector, message }) => [selector, (node) => context.report({ node, message })]));
    },
  };
}

/** A status number: what a protocol answer's status looks like (4xx and 5xx are what code below the edge chooses). */
const STATUS = "Literal[value>=400][value<600]";

const EDGE =
  "Statuses are chosen at the transport edge: throw a domain error (src/platform/common/errors.ts) and let sendError / restErrorOf answer it.";

/** (a) Statuses only at the transport edge. */
const statusAtEdge = restricted("HTTP statuses are chosen only at the transport edge", [
  { selector: "CallExpression[callee.type='MemberExpression'][callee.property.name=/^(status|sendStatus|writeHead)$/]", message: EDGE },
  { selector: "AssignmentExpression[left.type='MemberExpression'][left.property.name=/^(status|statusCode)$/]", message: EDGE },
  { selector: `Property[key.name=/status/i] > ${STATUS}`, message: EDGE },
  { selector: `VariableDeclarator[id.name=/status/i] ${STATUS}`, message: EDGE },
  { selector: `PropertyDefinition[key.name=/status/i] ${STATUS}`, message: EDGE },
]);

/**
 * (a) for a feature's router (`*.router.ts`), which is its HTTP edge: it may answer success and
 * redirects (`res.status(200)`, `res.redirect(303, …)`), never choose an error status itself.
 */
const successOnlyInRouters = restricted("a router answers errors only through sendError", [
  {
    selector: `CallExpression[callee.type='MemberExpression'][callee.property.name=/^(status|sendStatus|writeHead)$/] > ${STATUS}.arguments`,
    message: EDGE,
  },
  {
    selector:
      "CallExpression[callee.type='MemberExpression'][callee.property.name=/^(status|sendStatus|writeHead)$/] > :not(Literal).arguments:first-child",
    message: EDGE,
  },
  {
    selector: "ImportSpecifier[imported.name=/^(restErrorOf|graphqlExtensionsOf)$/]",
    message: "Routers answer errors with sendError (src/transports/http/respond.ts), the one function that writes an error body.",
  },
]);

/** (b) The request origin is read where audit events are recorded: AuditService. */
const originRead = restricted("the request origin is read only by AuditService", [
  {
    selector: "ImportSpecifier[imported.name='currentAuditContext']",
    message:
      "The request origin is read in one place, AuditService (record, origin()). A rate limit or a log takes the address from its own request.",
  },
  {
    selector: "ImportDeclaration[source.value=/audit-context$/] > ImportNamespaceSpecifier",
    message: "Import the origin's entry functions by name; reading it is AuditService's.",
  },
]);

/** (c) Bind parameters go through bindParam. */
const BIND = "Bind parameters are added with bindParam(bind, value) from src/platform/common/sql.ts, which also writes the placeholder.";
const bindParam = restricted("bind parameters only through bindParam", [
  { selector: "CallExpression[callee.object.name='bind'][callee.property.name=/^(push|unshift|splice)$/]", message: BIND },
  { selector: "AssignmentExpression[left.object.name='bind']", message: BIND },
  { selector: "TemplateLiteral > MemberExpression[object.name='bind'][property.name='length']", message: BIND },
]);

export default {
  rules: {
    layers,
    "feature-entry": featureEntry,
    "status-at-edge": statusAtEdge,
    "router-errors-through-edge": successOnlyInRouters,
    "origin-read": originRead,
    "bind-param": bindParam,
  },
};
