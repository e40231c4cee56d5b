import { startIdp } from "./oidc-idp";

/**
 * A local OpenID Connect identity provider for trying SSO by hand (docs/sso.md, "SSO walk-through"): the
 * same real oidc-provider IdP the tests run, with the service registered as a client and two people.
 * Like a fresh Keycloak realm with one client, minus the admin console; it signs in as `--login-as`
 * without a password page. Prints one JSON line with everything the provider configuration needs.
 *
 *   npm run sso:dev-idp -- [--port 8090] [--app http://localhost:3000] [--slug local] [--login-as admin|member]
 */
const CLIENT_ID = "finance-gateway";
const CLIENT_SECRET = "dev-client-secret";

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 && process.argv[index + 1] ? process.argv[index + 1] : fallback;
}

async function main(): Promise<void> {
  const app = option("app", "http://localhost:3000").replace(/\/+$/, "");
  const slug = option("slug", "local");
  const idp = await startIdp({
    name: "dev",
    port: Number(option("port", "8090")),
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${app}/auth/sso/${slug}/callback`],
        post_logout_redirect_uris: [`${app}/auth/sso/logged-out`],
      },
    ],
    users: {
      admin: { email: "ada@example.test", email_verified: true, name: "Ada Admin", groups: ["finance-admins"] },
      member: { email: "max@example.test", email_verified: true, name: "Max Member", groups: ["staff"] },
    },
    loginAs: option("login-as", "admin"),
  });
  process.stdout.write(
    JSON.stringify({
      issuer: idp.issuer,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUri: `${app}/auth/sso/${slug}/callback`,
      signsInAs: option("login-as", "admin") === "member" ? "max@example.test" : "ada@example.test",
    }) + "\n",
  );
  const stop = () => void idp.stop().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
