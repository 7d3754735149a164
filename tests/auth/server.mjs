// A real OpenID Connect / OAuth 2.1 authorization server (oidc-provider) for
// the authorization tests, on 127.0.0.1:
//
//   node tests/auth/server.mjs PORT OIDC_PROVIDER_DIR
//
// prints `ready http://127.0.0.1:PORT` once listening. Clients (all with the
// client-credentials grant and RFC 8707 resource indicators, tokens carrying
// `aud` = the requested resource and the granted scopes):
//   alice / alice-secret   JWT access tokens, 300 s
//   bob / bob-secret       JWT access tokens, 300 s (another subject)
//   short / short-secret   JWT access tokens, 3 s
//   opaque / opaque-secret opaque access tokens (validated by introspection)
//   rs / rs-secret         the MCP server itself, for introspection
// Test hooks (not part of any standard):
//   GET  /test/keys    the signing key (kid, private and public PEM) and an
//                      RSA key that is not published (untrusted)
//   POST /test/rotate  replaces the signing key with a new one (new kid)
//   GET  /test/stats   how often the key set was fetched
import http from 'node:http';
import crypto from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [port, moduleDir] = process.argv.slice(2);
console.error(`starting on port ${port}`);
const { default: Provider } = await import(
  pathToFileURL(path.join(moduleDir, 'node_modules', 'oidc-provider', 'lib', 'index.js')).href
);
const issuer = `http://127.0.0.1:${port}`;
const SCOPES = 'mcp files:read files:write admin';
const stats = { jwks: 0 };

function newKey(kid) {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    kid,
    jwk: { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' },
    privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }),
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }),
  };
}

const untrusted = newKey('untrusted');
let generation = 1;
let signing = newKey(`key-${generation}`);

function makeProvider() {
  const client = (id, extra = {}) => ({
    client_id: id,
    client_secret: `${id}-secret`,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    scope: SCOPES,
    ...extra,
  });
  const provider = new Provider(issuer, {
    clients: [client('alice'), client('bob'), client('short'), client('opaque'), client('rs')],
    jwks: { keys: [signing.jwk] },
    scopes: SCOPES.split(' '),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true, allowedPolicy: () => true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => ({
          scope: SCOPES,
          audience: resource,
          accessTokenTTL: client.clientId === 'short' ? 3 : 300,
          accessTokenFormat: client.clientId === 'opaque' ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  provider.on('server_error', (ctx, err) => console.error('server_error', err));
  return provider;
}

let provider = makeProvider();

const server = http.createServer((req, res) => {
  const json = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.url === '/test/keys') {
    return json(200, {
      kid: signing.kid,
      private_pem: signing.privatePem,
      public_pem: signing.publicPem,
      untrusted_pem: untrusted.privatePem,
    });
  }
  if (req.url === '/test/rotate' && req.method === 'POST') {
    generation += 1;
    signing = newKey(`key-${generation}`);
    provider = makeProvider();
    return json(200, { kid: signing.kid });
  }
  if (req.url === '/test/stats') return json(200, stats);
  if (req.url === '/jwks') stats.jwks += 1;
  return provider.callback()(req, res);
});
server.listen(Number(port), '127.0.0.1', () => {
  process.stdout.write(`ready ${issuer}\n`);
  console.error(`ready ${issuer}`);
  // The reader of stdout stops at the ready line: everything else goes to stderr.
  console.log = console.error;
  console.info = console.error;
});
