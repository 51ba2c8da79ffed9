"""Tests for mcp_min's OAuth add-on and the auth plug-in interface.

Everything runs against HTTP servers in this process on 127.0.0.1 (URLs that must be
refused are refused before any connection is made).  Run with:

    python -m pytest -q tests/test_oauth.py
"""
import base64
import hashlib
import itertools
import json
import logging
import os
import select
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import mcp_min  # noqa: E402
from mcp_min import AuthError, AuthRequired, Client, OAuth, RequestTimeout  # noqa: E402
from testsupport import HttpTestServer, cli_argv  # noqa: E402


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# ---------------------------------------------------------------------------
# An ECDSA P-256 verifier written independently of the module's signer
# (Jacobian arithmetic with its own formulas), and JWT helpers built on it.
# ---------------------------------------------------------------------------

P256_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
P256_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
P256_G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
          0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)


def on_curve(x, y):
    return (y * y - (x * x * x - 3 * x + P256_B)) % P256_P == 0


def p256_verify(pub, message, r, s):
    """ECDSA verification (FIPS 186-4 6.4.2) with Jacobian points."""
    p = P256_P

    def double(P):
        x, y, z = P
        if not y:
            return (0, 1, 0)
        ysq = y * y % p
        s4 = 4 * x * ysq % p
        m = 3 * (x - z * z) * (x + z * z) % p  # a = -3
        nx = (m * m - 2 * s4) % p
        return nx, (m * (s4 - nx) - 8 * ysq * ysq) % p, 2 * y * z % p

    def add(P, Q):
        if not P[2]:
            return Q
        if not Q[2]:
            return P
        z1z1, z2z2 = P[2] * P[2] % p, Q[2] * Q[2] % p
        u1, u2 = P[0] * z2z2 % p, Q[0] * z1z1 % p
        s1, s2 = P[1] * Q[2] * z2z2 % p, Q[1] * P[2] * z1z1 % p
        if u1 == u2:
            return double(P) if s1 == s2 else (0, 1, 0)
        h, rr = (u2 - u1) % p, (s2 - s1) % p
        h2 = h * h % p
        h3 = h * h2 % p
        nx = (rr * rr - h3 - 2 * u1 * h2) % p
        return nx, (rr * (u1 * h2 - nx) - s1 * h3) % p, h * P[2] * Q[2] % p

    def mul(k, P):
        R = (0, 1, 0)
        for bit in bin(k)[2:]:
            R = double(R)
            if bit == "1":
                R = add(R, P)
        return R

    if not (0 < r < P256_N and 0 < s < P256_N) or not on_curve(*pub):
        return False
    e = int.from_bytes(hashlib.sha256(message).digest(), "big")
    w = pow(s, P256_N - 2, P256_N)
    X = add(mul(e * w % P256_N, (P256_G[0], P256_G[1], 1)), mul(r * w % P256_N, (pub[0], pub[1], 1)))
    if not X[2]:
        return False
    x = X[0] * pow(X[2] * X[2], p - 2, p) % p
    return x % P256_N == r


def jwk_point(jwk):
    return int.from_bytes(unb64url(jwk["x"]), "big"), int.from_bytes(unb64url(jwk["y"]), "big")


def verify_jwt(jwt, pub=None):
    """(header, claims) of a compact ES256 JWS whose signature verifies with ``pub`` (default:
    the key in its own ``jwk`` header, as DPoP proofs carry it); AssertionError otherwise."""
    head, payload, sig = jwt.split(".")
    header, claims = json.loads(unb64url(head)), json.loads(unb64url(payload))
    raw = unb64url(sig)
    assert header["alg"] == "ES256" and len(raw) == 64
    pub = pub or jwk_point(header["jwk"])
    assert p256_verify(pub, ("%s.%s" % (head, payload)).encode(), int.from_bytes(raw[:32], "big"),
                       int.from_bytes(raw[32:], "big")), "signature does not verify"
    return header, claims


def thumbprint(jwk):
    """RFC 7638 JWK SHA-256 thumbprint."""
    canonical = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode()).digest())




# ---------------------------------------------------------------------------
# The world: an MCP server and its authorization server in one HTTP server
# ---------------------------------------------------------------------------

class OAuthWorld(object):
    """One in-process HTTP server playing a 2025-11-25 MCP server (POST /mcp, bearer or DPoP
    tokens) and its authorization server.  ``cfg`` keys:
      prm: path of the protected resource metadata (None: none), prm_in_header, prm_resource,
      prm_as (the authorization server it names), scopes_supported (PRM), challenge_scope,
      issuer_path ("" or "/t1"), as_meta_path (None: none), as_issuer (override), pkce (list or
      None), registration (bool), as_scopes, cimd, call_scope (tools/call needs these scopes,
      else 403), always_403, expires_in, refresh, auth_methods, iss_param ("good", "bad", None),
      meta (dict merged into the AS metadata), token_error (an OAuth error code every token
      request gets), redirects ({path: (status, location)} answered instead),
      dpop_algs (advertised dpop_signing_alg_values_supported), as_nonce / rs_nonce: None |
      "once" (demand one fixed nonce) | "always" (refuse every proof, same nonce) | "rotate"
      (refuse every proof, a new nonce each time), keep_alive (seconds: HTTP/1.1 kept-alive
      connections announced with ``Keep-Alive: timeout=N``, closed the way Node closes them
      under load: a request that comes once they were idle that long is reset unread, as when
      the server's idle timer runs before it reads what arrived; world.lost counts those)."""

    def __init__(self, **cfg):
        self.cfg = dict(prm="/.well-known/oauth-protected-resource/mcp", prm_in_header=True, issuer_path="",
                        as_meta_path="/.well-known/oauth-authorization-server", pkce=["S256"], registration=True,
                        expires_in=3600, refresh=False, auth_methods=["none"])
        self.cfg.update(cfg)
        self.log = []  # (method, path, detail)
        self.tokens = {}  # access token -> {"scopes": [...], "jkt": thumbprint or None}
        self.refresh_tokens = {}
        self.challenges = {}  # code -> (challenge, scopes)
        self.jtis = set()
        self.nonce_challenges = {"as": 0, "rs": 0}
        self.counter = itertools.count(1)
        self.lost = 0  # requests reset unread on an idle kept-alive connection (cfg keep_alive)
        world = self

        class Handler(BaseHTTPRequestHandler):
            if self.cfg.get("keep_alive"):
                protocol_version = "HTTP/1.1"
            served_at = None  # time.monotonic() of this connection's last answer

            def log_message(self, *a):
                pass

            def handle_one_request(self):
                idle_limit = world.cfg.get("keep_alive")
                if idle_limit and self.served_at is not None:
                    select.select([self.connection], [], [])  # the next request, or the client closing
                    if time.monotonic() - self.served_at > idle_limit:
                        if self.connection.recv(1, socket.MSG_PEEK):  # a request, not the client's close
                            world.lost += 1
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        self.close_connection = True
                        return
                BaseHTTPRequestHandler.handle_one_request(self)
                self.served_at = time.monotonic()

            def _send(self, status, obj=None, headers=None):
                body = json.dumps(obj).encode() if obj is not None else b""
                self.send_response(status)
                if world.cfg.get("keep_alive"):
                    self.send_header("Keep-Alive", "timeout=%d" % world.cfg["keep_alive"])
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                if obj is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _redirected(self, path):
                target = (world.cfg.get("redirects") or {}).get(path)
                if target:
                    self._send(target[0], None, {"Location": target[1]})
                return bool(target)

            def do_GET(self):
                path = self.path.split("?")[0]
                world.log.append(("GET", path, None))
                if self._redirected(path):
                    return
                doc = world.get_doc(path)
                self._send(200, doc) if doc is not None else self._send(404, {"error": "not_found"})

            def do_POST(self):
                path = self.path.split("?")[0]
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if path == "/mcp":
                    status, obj, headers = world.mcp(json.loads(raw), self.headers)
                elif path in ("/token", world.cfg["issuer_path"] + "/token"):
                    form = dict(urllib.parse.parse_qsl(raw.decode()))
                    world.log.append(("POST", "/token", dict(form, _auth=self.headers.get("Authorization"),
                                                             _dpop=self.headers.get("DPoP"))))
                    if self._redirected(path):
                        return
                    status, obj, headers = world.token(form, self.headers.get("DPoP"),
                                                       world.issuer + "/token")
                elif path in ("/register", world.cfg["issuer_path"] + "/register") and world.cfg["registration"]:
                    world.log.append(("POST", "/register", json.loads(raw)))
                    status, obj, headers = 201, {"client_id": "dyn-client"}, None
                else:
                    status, obj, headers = 404, {"error": "not_found"}, None
                self._send(status, obj, headers)

        self.server = HttpTestServer(handler=Handler)
        self.base, self.url = self.server.base, self.server.url
        self.issuer = self.base + self.cfg["issuer_path"]

    def close(self):
        self.server.stop()

    def paths(self, method="GET"):
        return [p for m, p, _ in self.log if m == method]

    def posts(self, path):
        return [d for m, p, d in self.log if m == "POST" and p == path]

    def get_doc(self, path):
        c = self.cfg
        if c["prm"] and path == c["prm"]:
            doc = {"resource": c.get("prm_resource") or self.url,
                   "authorization_servers": [c.get("prm_as") or self.issuer]}
            if c.get("scopes_supported"):
                doc["scopes_supported"] = c["scopes_supported"]
            return doc
        if c["as_meta_path"] and path == c["as_meta_path"]:
            ip = c["issuer_path"]
            doc = {"issuer": c.get("as_issuer") or self.issuer, "authorization_endpoint": self.issuer + "/authorize",
                   "token_endpoint": self.issuer + "/token", "response_types_supported": ["code"],
                   "token_endpoint_auth_methods_supported": c["auth_methods"]}
            if c["registration"]:
                doc["registration_endpoint"] = self.base + ip + "/register"
            if c["pkce"] is not None:
                doc["code_challenge_methods_supported"] = c["pkce"]
            if c.get("as_scopes"):
                doc["scopes_supported"] = c["as_scopes"]
            if c.get("cimd"):
                doc["client_id_metadata_document_supported"] = True
            if c.get("iss_param"):
                doc["authorization_response_iss_parameter_supported"] = True
            if c.get("dpop_algs"):
                doc["dpop_signing_alg_values_supported"] = c["dpop_algs"]
            doc.update(c.get("meta") or {})
            return doc
        return None

    def challenge(self, status, scope=None, error=None):
        parts = []
        if scope:
            parts.append('scope="%s"' % scope)
        if self.cfg["prm_in_header"] and self.cfg["prm"]:
            parts.append('resource_metadata="%s%s"' % (self.base, self.cfg["prm"]))
        if error or status == 403:
            parts.append('error="%s"' % (error or "insufficient_scope"))
        return {"WWW-Authenticate": "Bearer " + ", ".join(parts)}

    # -- DPoP, checked the way a resource or authorization server would ----------
    def check_proof(self, proof, method, url, token=None):
        """The proof's (claims, key thumbprint); AssertionError when it is not valid here."""
        assert proof and "," not in proof, "one DPoP proof expected"
        header, claims = verify_jwt(proof)
        assert header["typ"] == "dpop+jwt" and "d" not in header["jwk"] and on_curve(*jwk_point(header["jwk"]))
        assert claims["htm"] == method and claims["htu"] == url, claims
        assert abs(time.time() - claims["iat"]) < 60
        assert claims["jti"] not in self.jtis, "a replayed jti"
        self.jtis.add(claims["jti"])
        if token is not None:
            assert claims["ath"] == b64url(hashlib.sha256(token.encode()).digest())
        else:
            assert "ath" not in claims
        return claims, thumbprint(header["jwk"])

    def nonce_wanted(self, who, claims):
        """None when the proof's nonce is acceptable, else the nonce to demand."""
        mode = self.cfg.get(who + "_nonce")
        if not mode or (mode == "once" and claims.get("nonce") == who + "-nonce"):
            return None
        self.nonce_challenges[who] += 1
        return "%s-nonce%s" % (who, "-%d" % next(self.counter) if mode == "rotate" else "")

    def mcp(self, msg, headers):
        authorization = headers.get("Authorization")
        self.log.append(("POST", "/mcp", {"method": msg.get("method"), "auth": authorization,
                                          "dpop": headers.get("DPoP")}))
        scheme, _, token = (authorization or "").partition(" ")
        record = self.tokens.get(token)
        if record is None or scheme != ("DPoP" if record["jkt"] else "Bearer"):
            return 401, {"error": "invalid_token"}, self.challenge(401, self.cfg.get("challenge_scope"))
        if record["jkt"]:
            claims, jkt = self.check_proof(headers.get("DPoP"), "POST", self.url, token)
            assert jkt == record["jkt"], "the proof's key is not the one the token is bound to"
            nonce = self.nonce_wanted("rs", claims)
            if nonce:
                return 401, {"error": "use_dpop_nonce"}, {
                    "WWW-Authenticate": 'DPoP error="use_dpop_nonce", error_description="nonce needed"',
                    "DPoP-Nonce": nonce}
        method = msg.get("method")
        if self.cfg.get("always_403") and method not in ("initialize", "server/discover") and \
                not method.startswith("notifications/"):
            return 403, {"error": "insufficient_scope"}, self.challenge(403, self.cfg["always_403"])
        if method == "tools/call" and self.cfg.get("call_scope"):
            need = self.cfg["call_scope"].split()
            if not all(s in record["scopes"] for s in need):
                return 403, {"error": "insufficient_scope"}, self.challenge(403, self.cfg["call_scope"])
        if "id" not in msg:
            return 202, None, None
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "oauth-fake", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "whoami", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": " ".join(record["scopes"])}]}
        else:
            return 200, {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}, None
        return 200, {"jsonrpc": "2.0", "id": msg["id"], "result": result}, None

    def token(self, form, proof, endpoint):
        jkt = None
        if proof:
            claims, jkt = self.check_proof(proof, "POST", endpoint)
            nonce = self.nonce_wanted("as", claims)
            if nonce:
                return 400, {"error": "use_dpop_nonce", "error_description": "nonce needed"}, {"DPoP-Nonce": nonce}
        if self.cfg.get("token_error"):
            return 400, {"error": self.cfg["token_error"], "error_description": "refused by the test"}, None
        grant = form.get("grant_type")
        if grant == "authorization_code":
            challenge, scopes = self.challenges.pop(form.get("code"), (None, None))
            verifier = form.get("code_verifier", "")
            if challenge is None or b64url(hashlib.sha256(verifier.encode()).digest()) != challenge:
                return 400, {"error": "invalid_grant", "error_description": "PKCE check failed"}, None
        elif grant == "refresh_token":
            scopes = self.refresh_tokens.pop(form.get("refresh_token"), None)
            if scopes is None:
                return 400, {"error": "invalid_grant"}, None
        else:
            scopes = form.get("scope", "").split()
        n = next(self.counter)
        token = "tok-%d" % n
        self.tokens[token] = {"scopes": scopes, "jkt": jkt}
        answer = {"access_token": token, "token_type": "DPoP" if jkt else "Bearer",
                  "expires_in": self.cfg["expires_in"]}
        if self.cfg["refresh"]:
            self.refresh_tokens["ref-%d" % n] = scopes
            answer["refresh_token"] = "ref-%d" % n
        return 200, answer, None

    def user(self, seen=None, state=None, iss="good"):
        """The callback form of the user step: approve whatever is asked."""
        def authorize(url):
            query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
            if seen is not None:
                seen.append(query)
            code = "code-%d" % next(self.counter)
            self.challenges[code] = (query.get("code_challenge"), query.get("scope", "").split())
            out = {"code": code, "state": state if state is not None else query["state"]}
            if self.cfg.get("iss_param") and iss:
                out["iss"] = self.issuer if iss == "good" else "http://evil.example"
            return query["redirect_uri"] + "?" + urllib.parse.urlencode(out)
        return authorize


class Recorder(object):
    """Another origin: records every request (method, path, headers, body) and answers 400."""

    def __init__(self):
        self.requests = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _record(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                recorder.requests.append((self.command, self.path, dict(self.headers), body))
                data = b'{"error": "invalid_request"}'
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _record

        self.server = HttpTestServer(handler=Handler)
        self.base = self.server.base

    def close(self):
        self.server.stop()


@pytest.fixture
def oauth_world():
    worlds = []

    def make(**cfg):
        worlds.append(OAuthWorld(**cfg))
        return worlds[-1]
    yield make
    for w in worlds:
        w.close()


@pytest.fixture
def recorder():
    r = Recorder()
    yield r
    r.close()


# ---------------------------------------------------------------------------
# Discovery, registration and the authorization code flow
# ---------------------------------------------------------------------------

def test_oauth_full_flow_from_www_authenticate(oauth_world, caplog):
    w = oauth_world(challenge_scope="mcp:basic")
    seen = []
    caplog.set_level(logging.DEBUG, logger="mcp_min")
    with Client(w.url, auth=OAuth(authorize=w.user(seen), client_name="t")) as c:
        assert c.call("whoami") == "mcp:basic"
    assert w.paths("GET")[:2] == ["/.well-known/oauth-protected-resource/mcp",
                                  "/.well-known/oauth-authorization-server"]
    (query,) = seen
    assert query["resource"] == w.url and query["scope"] == "mcp:basic"
    assert query["code_challenge_method"] == "S256" and query["client_id"] == "dyn-client"
    (reg,) = w.posts("/register")
    assert reg["redirect_uris"] == [query["redirect_uri"]] and "refresh_token" in reg["grant_types"]
    assert reg["application_type"] == "native"
    (tok,) = w.posts("/token")
    assert tok["resource"] == w.url and tok["grant_type"] == "authorization_code"
    assert tok["_dpop"] is None  # the server offers no DPoP: none is sent
    # Tokens, codes and verifiers never reach the log.
    text = caplog.text
    assert "OAuth:" in text and "Authorization" in text  # the trace is there...
    assert "tok-" not in text and tok["code_verifier"] not in text and tok["code"] not in text  # ...redacted


def test_oauth_prm_path_based_then_root(oauth_world):
    w = oauth_world(prm="/.well-known/oauth-protected-resource", prm_in_header=False, prm_resource=None)
    w.cfg["prm_resource"] = w.base  # a root PRM names the origin as the resource
    with Client(w.url, auth=OAuth(authorize=w.user())) as c:
        assert c.call("whoami") == ""
    assert w.paths("GET")[:2] == ["/.well-known/oauth-protected-resource/mcp",
                                  "/.well-known/oauth-protected-resource"]
    assert w.posts("/token")[0]["resource"] == w.base


@pytest.mark.parametrize("meta_path", ["/.well-known/oauth-authorization-server/t1",
                                       "/.well-known/openid-configuration/t1",
                                       "/t1/.well-known/openid-configuration"])
def test_oauth_as_metadata_locations_with_path(oauth_world, meta_path):
    w = oauth_world(issuer_path="/t1", as_meta_path=meta_path)
    with Client(w.url, auth=OAuth(authorize=w.user())) as c:
        c.list_tools()
    order = ["/.well-known/oauth-authorization-server/t1", "/.well-known/openid-configuration/t1",
             "/t1/.well-known/openid-configuration"]
    gets = w.paths("GET")
    assert gets[1:1 + order.index(meta_path) + 1] == order[:order.index(meta_path) + 1]
    assert "/.well-known/oauth-authorization-server" not in gets


def test_oauth_openid_configuration_without_path(oauth_world):
    w = oauth_world(as_meta_path="/.well-known/openid-configuration")
    with Client(w.url, auth=OAuth(authorize=w.user())) as c:
        c.list_tools()
    assert w.paths("GET")[1:3] == ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]


def test_oauth_2025_03_26_default_endpoints(oauth_world):
    w = oauth_world(prm=None, as_meta_path=None)
    with Client(w.url, auth=OAuth(authorize=w.user())) as c:
        c.list_tools()
    assert "/.well-known/oauth-authorization-server" in w.paths("GET")
    assert len(w.posts("/register")) == 1 and len(w.posts("/token")) == 1


def test_oauth_2025_03_26_metadata_issuer_must_be_the_servers_origin(oauth_world):
    # Without protected resource metadata the server's origin is the authorization server:
    # metadata naming an issuer on another origin is refused (an issuer on the same origin,
    # which older servers publish with a path, is the same party).
    w = oauth_world(prm=None, as_issuer="http://localhost:1")
    seen = []
    with pytest.raises(AuthError, match="issuer"):
        Client(w.url, auth=OAuth(authorize=w.user(seen)))
    assert seen == [] and w.posts("/token") == []
    w = oauth_world(prm=None)
    w.cfg["as_issuer"] = w.base + "/oauth"
    with Client(w.url, auth=OAuth(authorize=w.user())) as c:
        c.list_tools()


def test_oauth_refuses_mismatched_resource(oauth_world):
    w = oauth_world(prm_resource="https://evil.example.com/mcp")
    seen = []
    with pytest.raises(AuthError, match="evil.example.com"):
        Client(w.url, auth=OAuth(authorize=w.user(seen)))
    assert seen == [] and w.posts("/token") == []


def test_oauth_refuses_without_pkce_support(oauth_world):
    w = oauth_world(pkce=None)
    seen = []
    with pytest.raises(AuthError, match="PKCE"):
        Client(w.url, auth=OAuth(authorize=w.user(seen)))
    assert seen == []


def test_oauth_refuses_metadata_issuer_mismatch(oauth_world):
    w = oauth_world(as_issuer="http://127.0.0.1:1/other")
    with pytest.raises(AuthError, match="issuer"):
        Client(w.url, auth=OAuth(authorize=w.user()))


def test_oauth_state_and_iss_checked(oauth_world):
    w = oauth_world()
    with pytest.raises(AuthError, match="state"):
        Client(w.url, auth=OAuth(authorize=w.user(state="forged")))
    w2 = oauth_world(iss_param=True)
    with pytest.raises(AuthError, match="RFC 9207"):
        Client(w2.url, auth=OAuth(authorize=w2.user(iss="bad")))
    with pytest.raises(AuthError, match="RFC 9207"):
        Client(w2.url, auth=OAuth(authorize=w2.user(iss=None)))
    with Client(w2.url, auth=OAuth(authorize=w2.user())) as c:
        c.list_tools()
    assert w.posts("/token") == [] and len(w2.posts("/token")) == 1


def test_oauth_step_up_then_retry_limit(oauth_world):
    w = oauth_world(challenge_scope="mcp:basic", call_scope="mcp:basic mcp:write")
    seen = []
    with Client(w.url, auth=OAuth(authorize=w.user(seen))) as c:
        assert c.call("whoami") == "mcp:basic mcp:write"
    assert [q["scope"] for q in seen] == ["mcp:basic", "mcp:basic mcp:write"]
    w2 = oauth_world(challenge_scope="mcp:admin", always_403="mcp:admin")
    seen = []
    with Client(w2.url, auth=OAuth(authorize=w2.user(seen))) as c:
        with pytest.raises(AuthRequired) as info:
            c.list_tools()
        assert info.value.status == 403 and info.value.scope == "mcp:admin"
    assert len(seen) == 1  # the same scope again would not help: no loop


def test_oauth_a_fresh_token_refused_is_not_authorized_again(oauth_world):
    w = oauth_world()
    seen = []
    with Client(w.url, auth=OAuth(authorize=w.user(seen)), protocol_version="2025-11-25") as c:
        w.tokens.clear()  # the server forgets every token, and every new one at once
        w.token = lambda form, proof, endpoint: (200, {"access_token": "never-valid", "token_type": "Bearer"}, None)
        with pytest.raises(AuthRequired):
            c.list_tools(refresh=True)
    assert len(seen) == 2  # the first login, then one more for the refused token: no loop


def test_oauth_refresh_token_used_when_expired(oauth_world):
    w = oauth_world(expires_in=0, refresh=True, as_scopes=["mcp:basic", "offline_access"],
                    scopes_supported=["mcp:basic"])
    seen = []
    with Client(w.url, auth=OAuth(authorize=w.user(seen))) as c:
        c.list_tools()
        c.list_tools(refresh=True)
    assert seen[0]["scope"] == "mcp:basic offline_access" and len(seen) == 1
    grants = [t["grant_type"] for t in w.posts("/token")]
    assert grants[0] == "authorization_code" and "refresh_token" in grants[1:]
    assert all(t["resource"] == w.url for t in w.posts("/token"))


def test_oauth_offline_access_only_when_offered_and_scope_omitted(oauth_world):
    w = oauth_world()
    seen = []
    with Client(w.url, auth=OAuth(authorize=w.user(seen))) as c:
        c.list_tools()
    assert "scope" not in seen[0]


def test_oauth_client_registration_choices(oauth_world):
    # Pre-registered with a secret: client_secret_basic when offered, else client_secret_post.
    for methods, expect in ((["client_secret_basic"], "basic"), (["client_secret_post"], "post")):
        w = oauth_world(registration=False, auth_methods=methods)
        with Client(w.url, auth=OAuth(client_id="pre id", client_secret="s:cret", authorize=w.user())) as c:
            c.list_tools()
        (tok,) = w.posts("/token")
        if expect == "basic":
            assert tok["_auth"] == "Basic " + base64.b64encode(b"pre%20id:s%3Acret").decode()
            assert "client_secret" not in tok
        else:
            assert tok["client_secret"] == "s:cret" and tok["_auth"] is None
    # CIMD when the server supports it: the URL is the client_id, no registration.
    w = oauth_world(cimd=True)
    seen = []
    with Client(w.url, auth=OAuth(client_metadata_url="https://app.example/client.json",
                                  authorize=w.user(seen))) as c:
        c.list_tools()
    assert seen[0]["client_id"] == "https://app.example/client.json" and w.posts("/register") == []
    # Neither: a clear error.
    w = oauth_world(registration=False)
    with pytest.raises(AuthError, match="client_id"):
        Client(w.url, auth=OAuth(authorize=w.user()))


# ---------------------------------------------------------------------------
# ES256
# ---------------------------------------------------------------------------

# RFC 6979 A.2.5: ECDSA, P-256, SHA-256, deterministic nonces.
RFC6979_KEY = 0xC9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721
RFC6979_PUB = (0x60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6,
               0x7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299)
RFC6979_SIGS = {
    b"sample": (0xEFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716,
                0xF7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8),
    b"test": (0xF1ABB023518351CD71D881567B1EA663ED3EFCF6C5132B354F28D3B0B7D38367,
              0x019F4113742A2B14BD25926B49C649155F267E60D3814B4C0CC84250E46F0083),
}


def test_es256_matches_rfc6979_vectors():
    assert mcp_min._ec_mul(RFC6979_KEY, mcp_min._P256_G) == RFC6979_PUB
    assert mcp_min._ec_mul(P256_N, mcp_min._P256_G) is None  # n·G is the point at infinity
    for message, expected in RFC6979_SIGS.items():
        assert mcp_min._es256_sign(RFC6979_KEY, message) == expected
        assert p256_verify(RFC6979_PUB, message, *expected)
        assert not p256_verify(RFC6979_PUB, message + b"!", *expected)


# The RFC 6979 A.2.5 key as PKCS#8 and SEC1 PEM (DER assembled by hand, public key included).
def _pem(label, der):
    return "-----BEGIN %s-----\n%s\n-----END %s-----\n" % (label, base64.b64encode(der).decode(), label)


def _sec1_der():
    pub = b"\x04" + b"".join(v.to_bytes(32, "big") for v in RFC6979_PUB)
    body = (b"\x02\x01\x01" + b"\x04\x20" + RFC6979_KEY.to_bytes(32, "big") +
            b"\xa0\x0a\x06\x08\x2a\x86\x48\xce\x3d\x03\x01\x07" + b"\xa1\x44\x03\x42\x00" + pub)
    return b"\x30" + bytes([len(body)]) + body


def test_es256_jwt_from_pem_keys_verifies():
    sec1 = _sec1_der()
    algo = b"\x30\x13\x06\x07\x2a\x86\x48\xce\x3d\x02\x01\x06\x08\x2a\x86\x48\xce\x3d\x03\x01\x07"
    inner = b"\x02\x01\x00" + algo + b"\x04\x81" + bytes([len(sec1)]) + sec1
    pkcs8 = b"\x30\x81" + bytes([len(inner)]) + inner
    for pem in (_pem("PRIVATE KEY", pkcs8), _pem("EC PRIVATE KEY", sec1)):
        header, claims = verify_jwt(mcp_min._jwt_es256({"iss": "me"}, pem), RFC6979_PUB)
        assert header == {"alg": "ES256", "typ": "JWT"} and claims == {"iss": "me"}
    with pytest.raises(AuthError, match="P-256"):
        mcp_min._ec_private_key("-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----")


def test_oauth_client_credentials_private_key_jwt(oauth_world):
    w = oauth_world(auth_methods=["private_key_jwt"], scopes_supported=["svc"])
    with Client(w.url, auth=OAuth(client_id="svc-client", private_key=_pem("EC PRIVATE KEY", _sec1_der()),
                                  grant_type="client_credentials")) as c:
        assert c.call("whoami") == "svc"
    (tok,) = w.posts("/token")
    assert tok["grant_type"] == "client_credentials" and tok["resource"] == w.url
    assert tok["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    _, claims = verify_jwt(tok["client_assertion"], RFC6979_PUB)
    assert claims["iss"] == claims["sub"] == "svc-client" and claims["aud"] == w.issuer


# ---------------------------------------------------------------------------
# DPoP (RFC 9449)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("url, htu", [
    ("https://RS.Example.COM:443/mcp?session=1#frag", "https://rs.example.com/mcp"),
    ("http://user:pw@127.0.0.1:8080", "http://127.0.0.1:8080/"),
    ("http://[::1]:80/a/b/", "http://[::1]/a/b/"),
    ("https://as.example:8443/t1/token", "https://as.example:8443/t1/token"),
])
def test_dpop_htu_normalisation(url, htu):
    assert mcp_min._htu(url) == htu


def test_dpop_proof_contents_and_independent_signature():
    key = OAuth(dpop=True)._dpop_key()
    token = "tok-\u00e9".encode("utf-8").decode("latin-1")  # any header-safe text
    proofs = [key.proof("post", "https://RS.example/mcp?x=1#y", token) for _ in range(2)]
    (h1, c1), (h2, c2) = [verify_jwt(p) for p in proofs]  # verified with the jwk each proof carries
    assert h1["typ"] == "dpop+jwt" and h1["alg"] == "ES256" and h1["jwk"] == h2["jwk"]
    assert set(h1["jwk"]) == {"kty", "crv", "x", "y"} and h1["jwk"]["crv"] == "P-256"
    assert jwk_point(h1["jwk"]) == mcp_min._ec_mul(key.d, P256_G)  # the public half of the key
    assert c1["htm"] == "POST" and c1["htu"] == "https://rs.example/mcp"
    assert c1["ath"] == b64url(hashlib.sha256(token.encode("utf-8")).digest())
    assert c1["jti"] != c2["jti"] and len(unb64url(c1["jti"])) >= 16
    assert abs(c1["iat"] - time.time()) < 5 and "nonce" not in c1
    assert key.keep_nonce("https://RS.example:443/other", {"DPoP-Nonce": " n-1 "}) == "n-1"  # per origin
    _, c3 = verify_jwt(key.proof("GET", "https://rs.example/mcp"))
    assert c3["nonce"] == "n-1" and c3["htm"] == "GET" and "ath" not in c3
    _, c4 = verify_jwt(key.proof("POST", "https://as.example/token"))
    assert "nonce" not in c4  # nonces are kept per origin


def test_dpop_flow_binds_tokens_and_sends_a_fresh_proof_per_request(oauth_world, caplog):
    w = oauth_world(dpop_algs=["ES256"])
    caplog.set_level(logging.DEBUG, logger="mcp_min")
    auth = OAuth(authorize=w.user())
    with Client(w.url, auth=auth) as c:
        assert c.call("whoami") == ""
        c.list_tools(refresh=True)
    (tok,) = w.posts("/token")
    assert tok["_dpop"], "no proof at the token endpoint"
    token, = w.tokens
    assert w.tokens[token]["jkt"]  # bound to the proof's key
    used = [d for d in w.posts("/mcp") if d["auth"]]
    assert used and all(d["auth"] == "DPoP " + token and d["dpop"] for d in used)
    proofs = [d["dpop"] for d in used]
    assert len(set(verify_jwt(p)[1]["jti"] for p in proofs)) == len(proofs)  # fresh every time
    # The private key never reaches the log or the repr.
    d = auth._dpop_key().d
    for text in (caplog.text, repr(auth), repr(auth._dpop_key())):
        assert str(d) not in text and b64url(d.to_bytes(32, "big")) not in text
        assert token not in text


def test_dpop_only_when_offered_or_asked(oauth_world):
    w = oauth_world(dpop_algs=["ES256"])
    with Client(w.url, auth=OAuth(authorize=w.user(), dpop=False)) as c:
        c.list_tools()
    assert w.posts("/token")[0]["_dpop"] is None and w.posts("/mcp")[-1]["auth"].startswith("Bearer ")
    w = oauth_world(dpop_algs=["RS256"])  # nothing we can sign
    with Client(w.url, auth=OAuth(authorize=w.user())) as c:
        c.list_tools()
    assert w.posts("/token")[0]["_dpop"] is None
    w = oauth_world()  # not advertised, but asked for
    with Client(w.url, auth=OAuth(authorize=w.user(), dpop=True)) as c:
        c.list_tools()
    assert w.posts("/token")[0]["_dpop"] and w.posts("/mcp")[-1]["auth"].startswith("DPoP ")


def test_dpop_bound_refresh_uses_the_same_key(oauth_world, tmp_path):
    w = oauth_world(dpop_algs=["ES256"], refresh=True, expires_in=0)
    store = str(tmp_path / "tokens.json")
    with Client(w.url, auth=OAuth(authorize=w.user(), token_store=store)) as c:
        c.list_tools()
        c.list_tools(refresh=True)
    first, refresh = w.posts("/token")[:2]
    assert first["grant_type"] == "authorization_code" and refresh["grant_type"] == "refresh_token"
    keys = {thumbprint(verify_jwt(t["_dpop"])[0]["jwk"]) for t in w.posts("/token")}
    assert len(keys) == 1
    # The key is kept with the tokens bound to it: a new process presents them with it.
    with Client(w.url, auth=OAuth(authorize=w.user(), token_store=store)) as c:
        c.list_tools()
    last = w.posts("/mcp")[-1]
    assert thumbprint(verify_jwt(last["dpop"])[0]["jwk"]) in keys


def test_dpop_nonces_from_both_servers_are_honoured_once_and_kept(oauth_world):
    w = oauth_world(dpop_algs=["ES256"], as_nonce="once", rs_nonce="once")
    with Client(w.url, auth=OAuth(authorize=w.user())) as c:
        c.list_tools()
        c.call("whoami")
        c.list_tools(refresh=True)
    tokens = w.posts("/token")
    assert len(tokens) == 2 and [verify_jwt(t["_dpop"])[1].get("nonce") for t in tokens] == [None, "as-nonce"]
    assert w.nonce_challenges == {"as": 1, "rs": 1}  # the latest nonce of each origin is reused
    # Both servers share one origin here, so the first resource request carries that origin's
    # latest nonce (the authorization server's), is refused once, and then carries the new one.
    later = [verify_jwt(d["dpop"])[1].get("nonce") for d in w.posts("/mcp") if d["dpop"]]
    assert later[0] == "as-nonce" and set(later[1:]) == {"rs-nonce"} and len(later) >= 4


@pytest.mark.parametrize("mode", ["always", "rotate"])
def test_dpop_nonce_retry_at_the_authorization_server_happens_once(oauth_world, mode):
    w = oauth_world(dpop_algs=["ES256"], as_nonce=mode)
    with pytest.raises(AuthError) as info:
        Client(w.url, auth=OAuth(authorize=w.user()), protocol_version="2025-11-25")
    assert info.value.error == "use_dpop_nonce"
    assert len(w.posts("/token")) == 2


@pytest.mark.parametrize("mode", ["always", "rotate"])
def test_dpop_nonce_retry_at_the_resource_server_happens_once(oauth_world, mode):
    w = oauth_world(dpop_algs=["ES256"], rs_nonce=mode)
    with pytest.raises(AuthRequired) as info:
        Client(w.url, auth=OAuth(authorize=w.user()), protocol_version="2025-11-25")
    assert info.value.status == 401
    assert len([d for d in w.posts("/mcp") if d["dpop"]]) == 2 and w.nonce_challenges["rs"] == 2


def test_a_request_after_a_slow_login_does_not_reuse_a_connection_the_server_is_closing(oauth_world):
    # The 401 leaves its connection pooled; the login then takes longer than the server's announced
    # keep-alive timeout (Node: 5 s).  A loaded Node server runs its idle timer before reading what
    # arrived, so the repeat with the new token, sent on that connection, was reset unread
    # (conformance auth/dpop-nonce under load: "Connection reset by peer", no token ever presented).
    w = oauth_world(dpop_algs=["ES256"], rs_nonce="once", keep_alive=3)
    user = w.user()

    def slow_user(url):
        time.sleep(3.3)
        return user(url)
    with Client(w.url, auth=OAuth(authorize=slow_user), protocol_version="2025-11-25") as c:
        c.list_tools()
        c.call("whoami")
    assert w.lost == 0
    assert [d["method"] for d in w.posts("/mcp") if d["auth"]][:2] == ["initialize", "initialize"]  # the nonce


# ---------------------------------------------------------------------------
# Workload identity (RFC 7523 jwt-bearer)
# ---------------------------------------------------------------------------

def test_jwt_bearer_rereads_the_assertion_file_for_each_token_request(oauth_world, tmp_path):
    w = oauth_world(registration=False, scopes_supported=["wl"])
    token_file = tmp_path / "token"
    token_file.write_text("workload-jwt-1\n", encoding="utf-8")
    seen = []
    auth = OAuth(grant_type="jwt-bearer", assertion_file=str(token_file), client_id="wl-client",
                 authorize=w.user(seen))
    with Client(w.url, auth=auth, protocol_version="2025-11-25") as c:
        assert c.call("whoami") == "wl"
        token_file.write_text("workload-jwt-2", encoding="utf-8")  # the platform rotated it
        w.tokens.clear()  # and the server forgot our token
        assert c.call("whoami") == "wl"
    first, second = w.posts("/token")
    assert first["grant_type"] == second["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert (first["assertion"], second["assertion"]) == ("workload-jwt-1", "workload-jwt-2")
    assert first["client_id"] == "wl-client" and first["resource"] == w.url and first["scope"] == "wl"
    assert "client_secret" not in first and seen == [] and w.posts("/register") == []


def test_jwt_bearer_calls_the_assertion_provider_each_time_and_surfaces_errors(oauth_world):
    w = oauth_world(registration=False)
    calls = []

    def provider():
        calls.append(1)
        return "jwt-%d " % len(calls)

    with Client(w.url, auth=OAuth(grant_type="jwt-bearer", assertion_provider=provider),
                protocol_version="2025-11-25") as c:
        c.list_tools()
        w.tokens.clear()
        c.list_tools(refresh=True)
    assert [t["assertion"] for t in w.posts("/token")] == ["jwt-1", "jwt-2"] and len(calls) == 2
    assert "client_id" not in w.posts("/token")[0]  # the assertion names the workload
    w = oauth_world(registration=False, token_error="invalid_grant")
    with pytest.raises(AuthError) as info:
        Client(w.url, auth=OAuth(grant_type="jwt-bearer", assertion="jwt"), protocol_version="2025-11-25")
    assert info.value.error == "invalid_grant" and len(w.posts("/token")) == 1  # no retry, no other grant


def test_jwt_bearer_arguments_are_checked(tmp_path):
    for kwargs in ({"grant_type": "jwt-bearer"}, {"assertion": "x"},
                   {"grant_type": "jwt-bearer", "assertion": "x", "assertion_file": "f"},
                   {"grant_type": "jwt-bearer", "assertion_provider": "not callable"}, {"dpop": "yes"},
                   {"timeout": 0}):
        with pytest.raises(ValueError):
            OAuth(**kwargs)
    missing = str(tmp_path / "missing-token")
    w = OAuthWorld(registration=False)
    try:
        with pytest.raises(AuthError, match="missing-token"):
            Client(w.url, auth=OAuth(grant_type=mcp_min._GRANT_JWT_BEARER, assertion_file=missing),
                   protocol_version="2025-11-25")
        assert w.posts("/token") == []
    finally:
        w.close()


# ---------------------------------------------------------------------------
# Only https (or loopback http); credentials stay on their origin; deadlines
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("key, where", [("token_endpoint", "https://"), ("registration_endpoint", "https://"),
                                        ("authorization_endpoint", "https://")])
def test_plain_http_endpoints_off_this_machine_are_refused(oauth_world, key, where):
    w = oauth_world(meta={key: "http://as.example.com/" + key})
    seen = []
    with pytest.raises(AuthError, match="https") as info:
        Client(w.url, auth=OAuth(authorize=w.user(seen)), protocol_version="2025-11-25")
    assert "as.example.com" in str(info.value)
    assert seen == [] and w.posts("/token") == []  # nothing handed to the browser, nothing posted


def test_plain_http_authorization_server_and_server_are_refused(oauth_world):
    w = oauth_world(prm_as="http://as.example.com")
    with pytest.raises(AuthError, match="https"):
        Client(w.url, auth=OAuth(authorize=w.user()), protocol_version="2025-11-25")
    auth = OAuth()
    assert auth.headers("POST", "http://mcp.example.com/mcp") == {}
    assert auth.challenge("POST", "http://mcp.example.com/mcp", 401, {}, {}) is False


def test_file_urls_are_never_opened_nor_echoed(oauth_world, tmp_path):
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text("TOP-SECRET-CONTENT")
    w = oauth_world(meta={"token_endpoint": "file://" + str(secret_file)})
    with pytest.raises(AuthError) as info:
        Client(w.url, auth=OAuth(client_id="c", grant_type="client_credentials"), protocol_version="2025-11-25")
    assert "TOP-SECRET-CONTENT" not in str(info.value) and "https" in str(info.value)


@pytest.mark.parametrize("location", ["http://as.example.com/token", "file:///etc/passwd", "ftp://127.0.0.1/t"])
def test_redirects_to_refused_urls_are_not_followed(oauth_world, location):
    w = oauth_world(redirects={"/.well-known/oauth-authorization-server": (302, location)})
    with pytest.raises(AuthError, match="redirect") as info:
        Client(w.url, auth=OAuth(authorize=w.user()), protocol_version="2025-11-25")
    assert "root:" not in str(info.value)


@pytest.mark.parametrize("status", [303, 307])
def test_token_endpoint_redirects_are_not_followed(oauth_world, recorder, status):
    """A POST is never redirected: nothing -- credentials, a DPoP proof, a secret in the
    body -- reaches the other origin, and the error names the status."""
    w = oauth_world(registration=False, auth_methods=["client_secret_basic"], dpop_algs=["ES256"],
                    redirects={"/token": (status, recorder.base + "/token")})
    with pytest.raises(AuthError, match="HTTP %d" % status):
        Client(w.url, auth=OAuth(client_id="app", client_secret="app-secret", grant_type="client_credentials"),
               protocol_version="2025-11-25")
    assert w.posts("/token")[0]["_auth"].startswith("Basic ") and w.posts("/token")[0]["_dpop"]
    assert recorder.requests == []


def _trickler(head_bytes):
    """A server that answers every connection with ``head_bytes`` and then one byte every 50 ms."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def serve(conn):
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(head_bytes)
                while not stop.wait(0.05):
                    conn.sendall(b"x")
            except OSError:
                pass

    def accept():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return "http://127.0.0.1:%d/token" % server.getsockname()[1], lambda: (stop.set(), server.close())


@pytest.mark.parametrize("head", [b"HTTP/1.1 200 OK\r\nX-Slow: ", b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"])
def test_every_oauth_request_ends_by_its_deadline(oauth_world, head):
    url, stop = _trickler(head)
    try:
        w = oauth_world(meta={"token_endpoint": url})
        start = time.monotonic()
        with pytest.raises(RequestTimeout):
            Client(w.url, auth=OAuth(client_id="c", grant_type="client_credentials", timeout=1),
                   protocol_version="2025-11-25", timeout=30)
        assert time.monotonic() - start < 10  # a trickle cannot stretch the 1 s deadline
    finally:
        stop()


# ---------------------------------------------------------------------------
# Secrets stay out of messages and logs
# ---------------------------------------------------------------------------

def test_credentials_are_stripped_and_never_in_errors_or_logs(oauth_world, caplog):
    w = oauth_world(registration=False, auth_methods=["client_secret_post"])

    def echoing_token(form, proof, endpoint):  # a server that quotes what it got
        return 400, {"error": "invalid_client", "error_description": "bad secret %s" % form.get("client_secret")}, None
    w.token = echoing_token
    caplog.set_level(logging.DEBUG, logger="mcp_min")
    with pytest.raises(AuthError) as info:
        Client(w.url, auth=OAuth(client_id=" app\n", client_secret="sup3r-s3cret\n",
                                 grant_type="client_credentials"), protocol_version="2025-11-25")
    (tok,) = w.posts("/token")
    assert tok["client_id"] == "app" and tok["client_secret"] == "sup3r-s3cret"  # stripped
    for text in (str(info.value), repr(info.value.error_description), caplog.text):
        assert "sup3r-s3cret" not in text
    assert "invalid_client" in str(info.value)


# ---------------------------------------------------------------------------
# The browser step and the token store
# ---------------------------------------------------------------------------

def test_oauth_browser_step_on_a_loopback_port(oauth_world, monkeypatch):
    import webbrowser
    w = oauth_world()
    statuses = []

    def browser(url):  # the user approves; first a stray request with another state arrives
        redirect = w.user()(url)
        for target in (redirect.replace("state=", "state=forged"), redirect):
            try:
                statuses.append(urllib.request.urlopen(target, timeout=5).status)
            except urllib.error.HTTPError as e:
                statuses.append(e.code)
        return True

    monkeypatch.setattr(webbrowser, "open", browser)
    with Client(w.url, auth=OAuth()) as c:
        assert c.call("whoami") == ""
    assert statuses == [400, 200]


def test_loopback_listener_is_not_blocked_by_idle_connections(oauth_world, monkeypatch):
    import webbrowser
    monkeypatch.setattr(mcp_min, "LOOPBACK_IDLE_TIMEOUT", 60.0)  # far longer than the bound below
    w = oauth_world()
    idle = []

    def browser(url):  # a browser that preconnects (and never uses those connections) first
        port = urllib.parse.urlsplit(dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))[
            "redirect_uri"]).port
        idle.extend(socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(3))
        assert urllib.request.urlopen(w.user()(url), timeout=5).status == 200
        return True

    monkeypatch.setattr(webbrowser, "open", browser)
    start = time.monotonic()
    with Client(w.url, auth=OAuth()) as c:
        assert c.call("whoami") == ""
    assert time.monotonic() - start < 30  # neither the login nor the listener's close waited for them
    for sock in idle:  # and close() cut them
        assert sock.recv(1) == b""
        sock.close()


def test_oauth_token_store_is_private_and_reused(oauth_world, tmp_path):
    w = oauth_world()
    store = str(tmp_path / "tokens.json")
    with Client(w.url, auth=OAuth(authorize=w.user(), token_store=store)) as c:
        c.list_tools()
    if os.name == "posix":  # (Windows has no POSIX mode bits: there the profile folder's ACL guards it)
        assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    seen = []
    with Client(w.url, auth=OAuth(authorize=w.user(seen), token_store=store)) as c:
        c.list_tools()
    assert seen == [] and len(w.posts("/token")) == 1


def test_oauth_token_store_directory_is_created_private_or_named(oauth_world, tmp_path):
    w = oauth_world()
    store = tmp_path / "new" / "dir" / "tokens.json"
    with Client(w.url, auth=OAuth(authorize=w.user(), token_store=str(store))) as c:
        c.list_tools()
    assert store.exists()
    if os.name == "posix":  # (Windows has no POSIX mode bits: there the profile folder's ACL guards it)
        assert stat.S_IMODE(os.stat(str(store.parent)).st_mode) == 0o700
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(AuthError, match="a-file"):
        OAuth(token_store=str(blocker / "tokens.json"))


def test_oauth_unreadable_token_store_is_ignored(oauth_world, tmp_path):
    store = tmp_path / "tokens.json"
    store.write_text("{not json")
    w = oauth_world()
    with Client(w.url, auth=OAuth(authorize=w.user(), token_store=str(store))) as c:
        assert c.call("whoami") == ""
    assert json.loads(store.read_text())["resources"]
    if os.name == "posix":  # (Windows has no POSIX mode bits: there the profile folder's ACL guards it)
        assert oct(os.stat(str(store)).st_mode & 0o777) == "0o600"


def test_oauth_token_store_is_utf8_whatever_the_locale(tmp_path):
    store = tmp_path / "tokens.json"
    doc = {"resources": {"https://mcp.example/mcp": {"scope": ["caf\u00e9"], "tokens": {}}}, "clients": {}}
    store.write_bytes(json.dumps(doc, ensure_ascii=False).encode("utf-8"))
    code = ("import sys; sys.path.insert(0, %r); import mcp_min, locale\n"
            "o = mcp_min.OAuth(token_store=%r)\n"
            "scope = o._state['https://mcp.example/mcp']['scope'][0]\n"
            "print(locale.getpreferredencoding(False), scope == 'caf\\u00e9')\n"
            "o._save()\n" % (ROOT, str(store)))
    env = dict(os.environ, LC_ALL="C", LANG="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         timeout=60)
    assert out.returncode == 0, out.stderr.decode()
    encoding, loaded = out.stdout.decode().split()
    assert loaded == "True" and encoding.lower() not in ("utf-8", "utf8")  # really an ASCII locale
    assert json.loads(store.read_bytes().decode("utf-8"))["resources"]["https://mcp.example/mcp"]["scope"] == [
        "caf\u00e9"]


# ---------------------------------------------------------------------------
# The auth plug-in interface with the caller's own objects
# ---------------------------------------------------------------------------

class StaticToken(object):
    """The smallest plug-in: a fixed header, no challenge(): nothing is ever repeated."""

    def __init__(self, token):
        self.token = token

    def headers(self, method, url):
        return {"Authorization": "Bearer " + self.token}


class RotatingToken(StaticToken):
    """Hands out the next token after a 401 (e.g. read again from a file a sidecar refreshes)."""

    def __init__(self, tokens, always=False):
        StaticToken.__init__(self, tokens[0])
        self.tokens, self.always, self.challenges = list(tokens), always, []

    def challenge(self, method, url, status, response_headers, sent_headers):
        self.challenges.append((method, url, status, sent_headers.get("Authorization"),
                                "WWW-Authenticate" in response_headers))
        if self.always:
            return True
        if self.tokens[1:]:
            self.tokens.pop(0)
            self.token = self.tokens[0]
            return True
        return False


def test_custom_auth_objects_through_the_plug_in_interface(oauth_world):
    w = oauth_world()
    w.tokens.update({"static-1": {"scopes": ["a"], "jkt": None}, "rot-2": {"scopes": ["b"], "jkt": None}})
    with Client(w.url, auth=StaticToken("static-1\n")) as c:  # header values are stripped
        assert c.call("whoami") == "a"
    assert {d["auth"] for d in w.posts("/mcp")} == {"Bearer static-1"}
    rotating = RotatingToken(["rot-1", "rot-2"])
    with Client(w.url, auth=rotating, protocol_version="2025-11-25") as c:
        assert c.call("whoami") == "b"
    (method, url, status, sent, has_challenge), = rotating.challenges
    assert (method, url, status, sent, has_challenge) == ("POST", w.url, 401, "Bearer rot-1", True)
    with pytest.raises(ValueError):
        Client(w.url, auth=object())


def test_custom_auth_objects_cannot_loop(oauth_world):
    w = oauth_world()
    before = len(w.posts("/mcp"))
    with pytest.raises(AuthRequired):
        Client(w.url, auth=StaticToken("nope"), protocol_version="2025-11-25")
    assert len(w.posts("/mcp")) - before == 1  # no challenge(): never repeated
    before = len(w.posts("/mcp"))
    eager = RotatingToken(["nope"], always=True)
    with pytest.raises(AuthRequired):
        Client(w.url, auth=eager, protocol_version="2025-11-25")
    assert len(w.posts("/mcp")) - before == 1 + mcp_min.MAX_AUTH_RETRIES


def test_cli_workload_identity_with_dpop(oauth_world, tmp_path):
    w = oauth_world(registration=False, scopes_supported=["wl"])
    token_file = tmp_path / "token"
    token_file.write_text("cli-workload-jwt\n", encoding="utf-8")
    out = subprocess.run(cli_argv() + ["--url", w.url, "--assertion-file", str(token_file), "--dpop",
                                       "--client-id", "wl-cli", "call", "whoami"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert out.returncode == 0 and out.stdout.decode().strip() == "wl", out.stderr.decode()
    (tok,) = w.posts("/token")
    assert tok["assertion"] == "cli-workload-jwt" and tok["client_id"] == "wl-cli" and tok["_dpop"]
    assert all(d["auth"].startswith("DPoP ") for d in w.posts("/mcp") if d["auth"])
