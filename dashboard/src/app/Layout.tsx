import { useEffect, useState } from "react";
import { Navigate, NavLink, Outlet, useLocation } from "react-router";
import { PAGES } from "./navigation";
import { CONSOLE_ROLES, useSession } from "./session";
import { TimeZoneProvider, TimeZonePicker } from "./zone";

/** The signed-in frame: navigation, the viewer, sign-out. Anyone else goes to sign-in and comes back here after. */
export function Layout() {
  const session = useSession();
  const location = useLocation();
  const page = PAGES.find((candidate) => location.pathname.startsWith(`/${candidate.path}`));
  // On a narrow screen the navigation and the viewer sit behind a menu button; a new page closes it.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    document.title = `${page?.title ?? "Admin console"} · finance-gateway`;
    setMenuOpen(false);
  }, [page]);

  if (session.status === "loading") return <p className="centered">Loading…</p>;
  if (session.status === "signed-out") {
    const next = `${location.pathname}${location.search}`;
    return <Navigate to={`/sign-in?next=${encodeURIComponent(next)}`} replace />;
  }
  const { viewer, signOut } = session;
  if (!CONSOLE_ROLES.includes(viewer.role)) {
    return (
      <main className="centered refusal" aria-labelledby="refusal-title">
        <h1 id="refusal-title">No access to the admin console</h1>
        <p>
          You are signed in as <strong>{viewer.email}</strong> with the role <strong>{viewer.role}</strong>. Only administrators and
          auditors can open the admin console. Ask an administrator to change your role if you need it.
        </p>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </main>
    );
  }
  const pages = PAGES.filter((candidate) => candidate.roles.includes(viewer.role as "admin" | "auditor"));
  return (
    <TimeZoneProvider>
      <div className="frame">
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="topbar">
          <span className="brand">finance-gateway admin</span>
          <button
            type="button"
            className="menu-toggle"
            aria-expanded={menuOpen}
            aria-controls="console-menu"
            onClick={() => setMenuOpen((open) => !open)}
          >
            Menu
          </button>
          <div id="console-menu" className={`menu${menuOpen ? " open" : ""}`}>
            <nav aria-label="Console">
              <ul>
                {pages
                  .filter((candidate) => candidate.placement !== "account")
                  .map((candidate) => (
                    <li key={candidate.path}>
                      <NavLink to={`/${candidate.path}`}>{candidate.title}</NavLink>
                    </li>
                  ))}
                <li>
                  <a href="/graphql">GraphQL explorer</a>
                </li>
              </ul>
            </nav>
            <div className="who">
              <TimeZonePicker />
              <span className="viewer" title={viewer.email}>
                {viewer.email} <span className="role-badge">{viewer.role}</span>
              </span>
              {pages
                .filter((candidate) => candidate.placement === "account")
                .map((candidate) => (
                  <NavLink key={candidate.path} className="account-link" to={`/${candidate.path}`}>
                    {candidate.title}
                  </NavLink>
                ))}
              <button type="button" onClick={() => void signOut()}>
                Sign out
              </button>
            </div>
          </div>
        </header>
        <main id="main" className="content">
          <Outlet />
        </main>
        {pages.map((candidate) => candidate.background && <candidate.background key={candidate.path} />)}
      </div>
    </TimeZoneProvider>
  );
}

export function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        Nothing lives at this address. <NavLink to="/audit-logs">Open the audit log</NavLink>.
      </p>
    </section>
  );
}
