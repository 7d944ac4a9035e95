/**
 * The dashboard's page (served at /dashboard): static markup the script
 * fills. Its script and style sheet come from this origin only; nothing
 * inline, no eval, no framing.
 */

/**
 * Nothing from elsewhere, no inline script or style, calls to this API only. Script by nonce, not 'self': this
 * origin also answers JSONP with a callback the caller names, which 'self' would let an injected tag run.
 */
export function dashboardCsp(nonce: string): string {
  return `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`;
}

/** The page; `version` (a hash of the bundle) makes a new deploy's browsers fetch the new script and sheet; `nonce` is the CSP's, new per response. */
export function dashboardPage(version: string, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Publisher dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard?file=app.css&amp;v=${version}">
<script nonce="${nonce}" src="/dashboard?file=app.js&amp;v=${version}" defer></script>
</head>
<body>
<header>
<h1>Publisher dashboard</h1>
<p id="who"></p>
<button type="button" id="signout" hidden>Sign out</button>
</header>
<main>
<noscript><p>This dashboard needs JavaScript. The same numbers are in the API: see <a href="/v1/docs">the API reference</a>.</p></noscript>
<section id="signin" aria-labelledby="signin-h" hidden>
<h2 id="signin-h">Sign in</h2>
<form id="signin-form">
<p><label for="client">Client name</label> <input id="client" name="username" autocomplete="username" required></p>
<p><label for="key">API key</label> <input id="key" name="password" type="password" autocomplete="current-password" required></p>
<p><button type="submit">Sign in</button></p>
<p id="signin-error" role="alert"></p>
<p class="note">The key is sent once to get a token; the token is kept in this tab only (sessionStorage) until you sign out or it expires.</p>
</form>
</section>
<div id="board" hidden>
<form id="range" aria-labelledby="range-h">
<h2 id="range-h">Date range</h2>
<p><label for="from">From</label> <input id="from" type="date" required> <label for="to">To</label> <input id="to" type="date" required> <button type="submit">Show</button></p>
<p id="range-error" role="alert"></p>
</form>
<p id="status" role="status" class="visually-hidden"></p>
<section aria-labelledby="lists-h"><h2 id="lists-h">Lists</h2><div id="lists"></div></section>
<section aria-labelledby="growth-h"><h2 id="growth-h">Subscribers over time</h2>
<p><label for="growth-list">List</label> <select id="growth-list"></select></p>
<div id="growth"></div></section>
<section aria-labelledby="imports-h"><h2 id="imports-h">Imports</h2><div id="imports" aria-live="polite"></div></section>
<section aria-labelledby="events-h"><h2 id="events-h">Events per day</h2><div id="events"></div></section>
<section aria-labelledby="recos-h"><h2 id="recos-h">Recommendations per block</h2><div id="recos"></div></section>
</div>
</main>
</body>
</html>
`;
}
