"""A stdio MCP server that serves skills (extension io.modelcontextprotocol/skills), for tests.

    python tests/skills_server.py CONFIG.json

CONFIG.json:
    log:       a file where every message received is appended as one JSON line (flushed at once)
    versions:  protocol versions spoken (default ["2026-07-28", "2025-11-25"]); without
               2026-07-28, server/discover is an unknown method and clients shake hands
    declare:   declare the skills extension (default true)
    page_size: skill entries per skills/list page (default 1, so every entry is a page)
    skills:    the entries skills/list and skills/get answer with, as given
    files:     URI -> what resources/read returns for it: a string (text) or {"blob": base64}

It never checks what it serves against the entries: tests give it tampered files on purpose.
"""

import json
import sys

LATEST = "2026-07-28"


def main(path):
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)
    versions = cfg.get("versions") or [LATEST, "2025-11-25"]
    skills = cfg.get("skills") or []
    files = cfg.get("files") or {}
    page = max(int(cfg.get("page_size", 1)), 1)
    caps = {"resources": {}}
    if cfg.get("declare", True):
        caps["extensions"] = {"io.modelcontextprotocol/skills": {}}
    log = open(cfg["log"], "a", encoding="utf-8") if cfg.get("log") else None
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if log:
            log.write(json.dumps(msg) + "\n")
            log.flush()
        method, mid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if mid is None or method is None:
            continue  # notifications and answers
        result = error = None
        if method == "server/discover" and LATEST in versions:
            result = {"resultType": "complete", "supportedVersions": versions, "capabilities": caps,
                      "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "skills", "version": "1"}},
                      "ttlMs": 0, "cacheScope": "private"}
        elif method == "initialize":
            asked = params.get("protocolVersion")
            result = {"protocolVersion": asked if asked in versions else versions[-1], "capabilities": caps,
                      "serverInfo": {"name": "skills", "version": "1"}}
        elif method == "skills/list":
            start = int(params.get("cursor") or 0)
            result = {"skills": skills[start:start + page]}
            if start + page < len(skills):
                result["nextCursor"] = str(start + page)
        elif method == "skills/get":
            found = [s for s in skills if s.get("uri") == params.get("uri")]
            if found:
                result = {"skill": found[0]}
            else:
                error = {"code": -32602, "message": "no skill is served at %s" % params.get("uri")}
        elif method == "resources/read":
            uri = params.get("uri")
            if uri in files:
                body = files[uri]
                content = dict(body) if isinstance(body, dict) else {"text": body}
                content.setdefault("uri", uri)
                result = {"contents": [content]}
            else:
                error = {"code": -32602, "message": "no resource %s" % uri}
        elif method == "ping":
            result = {}
        else:
            error = {"code": -32601, "message": "method not found: %s" % method}
        if result is not None and LATEST in versions and method != "initialize":
            result.setdefault("resultType", "complete")
            if method in ("skills/list", "skills/get", "resources/read"):
                result.setdefault("ttlMs", 0)
                result.setdefault("cacheScope", "private")
        reply = {"jsonrpc": "2.0", "id": mid}
        reply.update({"error": error} if error is not None else {"result": result})
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main(sys.argv[1])
