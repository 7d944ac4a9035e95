/** The readable API reference: Redoc, served by this API itself (no CDN), rendering /v1/openapi.json. */
export const REDOC_SCRIPT = { name: 'redoc.standalone.js', packagePath: 'redoc/bundles/redoc.standalone.js' } as const;

/** The page loads nothing from elsewhere (Redoc would fetch its logo from its CDN). */
export const API_REFERENCE_CSP =
  "default-src 'none'; script-src 'self' blob:; worker-src 'self' blob:; connect-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:";

export function apiReferencePage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference: newsletter subscribers, events and recommendations</title>
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="/v1/openapi.json" hide-download-button="false"></redoc>
<script src="/v1/docs/${REDOC_SCRIPT.name}"></script>
</body>
</html>
`;
}
