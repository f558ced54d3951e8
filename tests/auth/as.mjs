// A real OAuth 2.1 / OpenID Connect authorization server for tests/auth.rs: oidc-provider
// (pinned in package.json), on 127.0.0.1, with the client credentials grant, the authorization
// code grant (PKCE, required of public clients), open dynamic client registration (RFC 7591),
// resource indicators (RFC 8707) and token introspection (RFC 7662).
//
//   PORT=0 RESOURCE=http://127.0.0.1:8000/mcp node tests/auth/as.mjs
//
// Prints one line `{"issuer": "http://127.0.0.1:PORT"}` once it listens. Its signing key is
// new at every start (a new `kid`): restarting it on the same PORT rotates the keys.
//
// Clients:
//   mcp-test / test-secret      client_credentials; scopes mcp tickets:read tickets:write
//   mcp-other / other-secret    the same, another principal
//   mcp-server / server-secret  the resource server's own credentials, for introspection
//   any client registered at /reg (RFC 7591): e.g. a native public client with a loopback
//   redirect URI (any port, RFC 8252 §7.3), for the authorization code grant
// Users: oidc-provider's own development interactions (GET /interaction/:uid shows a form, POST
// it with `prompt=login&login=NAME`: any name logs in as that subject; then `prompt=consent`
// grants what was asked for). No password: the tests play the user.
// Resources (the `resource` parameter of a token request):
//   $RESOURCE                 JWT access tokens with aud = $RESOURCE
//   $RESOURCE?opaque          opaque access tokens (introspection), aud = $RESOURCE
//   http://other.example/mcp  JWT access tokens for another audience
import { randomUUID } from 'node:crypto';
import Provider, { errors } from 'oidc-provider';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';

const PORT = Number(process.env.PORT ?? 0);
const RESOURCE = process.env.RESOURCE;
if (!RESOURCE) {
  console.error('as.mjs: set RESOURCE to the MCP server\'s canonical URI');
  process.exit(2);
}
const OPAQUE = `${RESOURCE}?opaque`;
const OTHER = 'http://other.example/mcp';
const SCOPES = 'mcp tickets:read tickets:write';

const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'ES256', use: 'sig' };

const server = (await import('node:http')).createServer();
await new Promise((resolve) => server.listen(PORT, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'mcp-test',
      client_secret: 'test-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      id_token_signed_response_alg: 'ES256',
      scope: SCOPES,
    },
    {
      client_id: 'mcp-other',
      client_secret: 'other-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      id_token_signed_response_alg: 'ES256',
      scope: SCOPES,
    },
    {
      client_id: 'mcp-server',
      client_secret: 'server-secret',
      grant_types: [],
      redirect_uris: [],
      response_types: [],
      id_token_signed_response_alg: 'ES256',
    },
  ],
  // Registered clients sign their ID tokens with the one key there is (ES256).
  clientDefaults: {
    grant_types: ['authorization_code'],
    id_token_signed_response_alg: 'ES256',
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  },
  jwks: { keys: [jwk] },
  scopes: SCOPES.split(' '),
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        const jwt = { sign: { alg: 'ES256' } };
        switch (resource) {
          case RESOURCE:
            return { scope: SCOPES, audience: RESOURCE, accessTokenFormat: 'jwt', accessTokenTTL: 300, jwt };
          case OPAQUE:
            return { scope: SCOPES, audience: RESOURCE, accessTokenFormat: 'opaque', accessTokenTTL: 300 };
          case OTHER:
            return { scope: SCOPES, audience: OTHER, accessTokenFormat: 'jwt', accessTokenTTL: 300, jwt };
          default:
            throw new errors.InvalidTarget();
        }
      },
    },
  },
});
// For the negative tests only: POST /test/mint {claims, kid?} signs `claims` with this server's
// real key (the key id given, or its own), to make tokens that are well signed but expired,
// not yet valid, from another issuer, or naming an unknown key. Every token on the positive
// path comes from the real token endpoint.
const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.method !== 'POST' || req.url !== '/test/mint') return callback(req, res);
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', async () => {
    const { claims, kid } = JSON.parse(body);
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: kid ?? jwk.kid })
      .sign(privateKey);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ token }));
  });
});
console.log(JSON.stringify({ issuer }));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
