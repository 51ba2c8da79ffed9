"""Conformance driver for the auth/* client scenarios, using only mcp_min's public API.

    conformance client --command "python tests/interop/conformance_auth.py" --scenario auth/metadata-default

The URL comes as the last argument; MCP_CONFORMANCE_CONTEXT (JSON) may carry client
credentials or (auth/wif-jwt-bearer) a workload identity token, which is handed over as
the token file a platform would mount.  DPoP needs nothing here: mcp_min uses it when
the authorization server advertises it.  The user step is headless: the authorization URL is fetched without
following its redirect, and the Location header is the redirect we return.
"""
import json
import logging
import os
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from mcp_min import Client, McpError, OAuth  # noqa: E402

CIMD_URL = "https://conformance-test.local/client-metadata.json"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def headless_authorize(url):
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        resp = opener.open(url, timeout=10)
    except urllib.error.HTTPError as e:
        if e.code in (301, 302, 303, 307, 308):
            return e.headers["Location"]
        raise
    raise RuntimeError("the authorization endpoint did not redirect (HTTP %s)" % resp.status)


def oauth_options(ctx, scenario, token_dir):
    """OAuth(...) keyword arguments for a scenario's context."""
    kwargs = {"authorize": headless_authorize, "client_metadata_url": CIMD_URL}
    if ctx.get("client_id"):
        kwargs.update(client_id=ctx["client_id"], client_secret=ctx.get("client_secret"))
    if ctx.get("valid_jwt"):  # workload identity: handed over as the token file a platform would mount
        token_file = os.path.join(token_dir, "token")
        with open(token_file, "w", encoding="utf-8") as f:
            f.write(ctx["valid_jwt"] + "\n")
        return {"grant_type": "jwt-bearer", "assertion_file": token_file, "client_id": ctx.get("client_id")}
    if ctx.get("private_key_pem"):
        kwargs.update(private_key=ctx["private_key_pem"], grant_type="client_credentials")
    elif ctx.get("idp_id_token"):
        kwargs.update(grant_type="cross_app_access", id_token=ctx["idp_id_token"],
                      idp_token_endpoint=ctx["idp_token_endpoint"], idp_client_id=ctx.get("idp_client_id"))
    elif "client-credentials" in scenario:
        kwargs["grant_type"] = "client_credentials"
    return kwargs


def main():
    url = sys.argv[-1]
    if os.environ.get("CONFORMANCE_TRACE"):
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    ctx = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or "auto"
    with tempfile.TemporaryDirectory(prefix="mcp_min-auth-") as token_dir:
        auth = OAuth(**oauth_options(ctx, os.environ.get("MCP_CONFORMANCE_SCENARIO", ""), token_dir))
        try:
            with Client(url, auth=auth, protocol_version=version, timeout=20) as client:
                tools = client.list_tools()
                if tools:
                    client.call_tool(tools[0]["name"], {})
        except McpError as e:
            print("conformance_auth: %s: %s" % (type(e).__name__, e), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
