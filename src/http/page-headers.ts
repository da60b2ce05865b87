/**
 * The security headers of the service's pages (the console, the portal, /docs), by @fastify/helmet
 * (decision 0034): a page loads only what the service serves, runs no inline script or style, and
 * no frame may hold it (clickjacking). Helmet's other defaults stay on: nosniff, the cross-origin
 * policies, Strict-Transport-Security (heeded over https) unless a caller turns it off.
 * `connectTo` adds origins the page's scripts may call (/docs: PUBLIC_BASE_URL's), `styles` the
 * hashes of inline styles a page's library applies (/docs: swagger-ui's).
 */
export function pageHelmet(connectTo: readonly string[] = [], styles: readonly string[] = []) {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", ...styles],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'", ...connectTo],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
  } as const;
}
