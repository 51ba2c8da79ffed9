"""A typed example that uses every public name of mcp_min; `mypy --strict` must accept it.

tests/test_api.py checks this file and mcp_min.py (mypy --strict; pyright, strict here) so
that an annotation which is wrong for the way people use the API fails CI.  It also runs it against
examples/calc.py (``python tests/typing/check_api.py``), so the example is true code, not a sketch.
"""
# pyright: strict
from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import sys
from typing import Any, Dict, List, Optional, Set

import mcp_min
from mcp_min import (AuthError, AuthRequired, Client, ConnectionClosed, Future, Group, HttpError, McpError, OAuth,
                     RequestCancelled, RequestError, RequestTimeout, ResourceNotFound, SkillVerificationError,
                     Subscription, Task, ToolError, UrlElicitationRequired, main)


def on_progress(progress: Any, total: Any, message: Any) -> None:
    print("progress", progress, total, message)


def sampling(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "none"}


def elicitation(params: Dict[str, Any]) -> Dict[str, Any]:
    return {"action": "decline"}


def on_log(level: str, logger: Optional[str], data: Any) -> None:
    print(level, logger, data)


def on_notification(method: str, params: Dict[str, Any]) -> None:
    print(method, params)


def use_client(server: List[str]) -> int:
    with Client(server, timeout=10, protocol_version="auto", env={"A": "1"}, inherit_env=False, cwd=None,
                roots=["/tmp"], sampling=sampling, elicitation=elicitation, url_elicitation=elicitation,
                on_log=on_log, on_notification=on_notification, on_stderr=print,
                client_info={"name": "check_api", "version": "1"}, probe_timeout=5.0) as client:
        version: Optional[str] = client.protocol_version
        info: Dict[str, Any] = client.server_info
        caps: Dict[str, Any] = client.server_capabilities
        instructions: Optional[str] = client.instructions
        kind: str = client.transport
        tail: List[str] = client.stderr
        print(version, info, caps, instructions, kind, tail, repr(client))

        tools: List[Dict[str, Any]] = client.list_tools(refresh=True)
        value: Any = client.call("add", {"a": 1}, b=2, timeout=5, progress=on_progress)
        raw: Dict[str, Any] = client.call_tool("add", a=1, b=2, timeout=None)
        assert value == 3 and not raw.get("isError") and tools

        futures: List[Future] = [client.submit("add", a=i, b=1, timeout=5.0) for i in range(3)]
        # An mcp_min Future is a concurrent.futures.Future: wait() and as_completed() take it as it is.
        done, _ = concurrent.futures.wait(futures, timeout=10)
        everything: Set[concurrent.futures.Future[Any]] = concurrent.futures.wait(futures).done
        finished = list(concurrent.futures.as_completed(futures, timeout=10))
        assert everything == done and isinstance(futures[0], concurrent.futures.Future)

        async def add_async(a: int, b: int) -> Any:  # and asyncio awaits it (the loop is not blocked)
            return await asyncio.wrap_future(client.submit("add", a=a, b=b, timeout=5.0))

        async def add_many() -> List[Any]:
            return list(await asyncio.gather(*(add_async(i, 1) for i in range(3))))
        assert asyncio.run(add_many()) == [1, 2, 3]
        for fut in futures:
            number: int = fut.id
            print(number, fut.method, fut.result(timeout=1), fut.exception(0), fut.done(), fut.running(),
                  fut.cancelled())
        late = client.submit_request("tools/list", None, timeout=5)
        seen: List[bool] = []
        called = threading.Event()  # (the callback runs on mcp_min-events: printing there would interleave)

        def on_done(f: Future) -> None:
            seen.append(f.done())
            called.set()
        late.add_done_callback(on_done)
        print(late.result(), late.cancel("no longer needed"), len(done), len(finished))
        called.wait(10)
        print("listed", seen[0] if seen else None)

        task: Task = client.start("add", a=1, b=2, ttl=60.0, progress=on_progress)
        if task.id is not None:
            print(task.status(timeout=5), task.cancel())
            again: Task = client.task(task.id, progress=on_progress)
            print(again)
        print(task.result(timeout=5))

        for lister in (client.list_resources, client.list_resource_templates, client.list_prompts):
            try:
                print(len(lister(refresh=False)))
            except RequestError as e:  # a server that offers no resources or prompts says so
                print(e.code)
        try:
            print(client.read_resource("calc://nothing", timeout=5))
        except ResourceNotFound as e:
            print(e.code, e.message, e.data, e.method)
        except RequestError as e:
            print("no resources:", e.code)
        try:
            print(client.get_prompt("explain", {"topic": "sums"}, timeout=5, style="short"))
            print(client.complete("explain", ("topic", "s"), {"style": "short"}))
        except RequestError as e:
            print("no prompts:", e)
        sub: Subscription = client.listen(tools=True, prompts=False, resources=False, resource_uris=(),
                                          callback=on_notification)
        print(sub.resource_uris, sub.acknowledged, sub.ended.is_set(), sub.error)
        sub.close()
        if not client.protocol_version or client.protocol_version < "2026-07-28":
            client.set_logging_level("info")
        client.ping(timeout=5)
        client.notify("notifications/roots/list_changed")
        print(client.request("tools/list", {}, timeout=5, progress=None)["tools"][0]["name"])
        model_tools: List[Dict[str, Any]] = client.tools_for("openai", strict=True)
        print(len(model_tools), client.tools_for("anthropic")[0]["name"], client.tools_for("openai-responses")[0]["strict"])
        calls = [{"id": "1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}]
        answers: List[Dict[str, Any]] = client.run_tool_calls(calls, "openai", timeout=5)
        print(answers[0]["content"])
        try:
            client.list_skills()
        except McpError as e:
            print("no skills:", e)
        try:
            print(client.read_skill("nothing", files=False, timeout=5)["name"])
        except McpError as e:
            print("no skill:", e)
    return 0


def use_group(server: List[str]) -> int:
    """A Group of one server: its namespaced names, and tools for a model."""
    config: Dict[str, Any] = {"mcpServers": {"calc": {"command": server[0], "args": server[1:]}}}
    with Group(config, separator="__", timeout=10) as group:
        errors: Dict[str, Exception] = group.errors
        clients: Dict[str, Client] = group.clients
        print(errors, list(clients), group.client("calc").server_info, len(group.list_tools()))
        print(group.call("calc__add", a=1, b=2), group.call_tool("calc__add", {"a": 1, "b": 2})["content"])
        fut: Future = group.submit("calc__add", a=1, b=2, timeout=5)
        print(fut.result(), len(group.list_resources()), len(group.list_prompts()))
        for resource in group.list_resources()[:1]:
            print(group.read_resource(resource["uri"], timeout=5)["contents"])
        for prompt in group.list_prompts()[:1]:
            print(group.get_prompt(prompt["name"], {}, timeout=5)["messages"])
        tools: List[Dict[str, Any]] = group.tools_for("anthropic", strict=False)
        blocks = [{"type": "tool_use", "id": "1", "name": tools[0]["name"], "input": {"a": 1, "b": 2}}]
        answers: List[Dict[str, Any]] = group.run_tool_calls(blocks, "anthropic", timeout=5)
        print(answers[0]["content"])
    return 0


def handle(error: McpError) -> str:
    """Every error class, as a caller would tell them apart."""
    if isinstance(error, UrlElicitationRequired):
        return ", ".join(str(e.get("url")) for e in error.elicitations)
    if isinstance(error, ResourceNotFound):
        return "not found: %s" % error.message
    if isinstance(error, RequestError):
        return "%s %d" % (error.method, error.code)
    if isinstance(error, ToolError):
        return str(error.result.get("content"))
    if isinstance(error, ConnectionClosed):
        return "%s %s" % (error.returncode, error.stderr)
    if isinstance(error, RequestTimeout):
        return "timeout"
    if isinstance(error, RequestCancelled):
        return "cancelled"
    if isinstance(error, AuthRequired):
        return "%s %s %s" % (error.resource_metadata, error.scope, error.challenge)
    if isinstance(error, HttpError):
        return "%s %d %s" % (error.url, error.status, error.body)
    if isinstance(error, AuthError):
        return "%s %s" % (error.error, error.error_description)
    if isinstance(error, SkillVerificationError):
        return "%s %s %s" % (error.skill, error.problem, error.detail)
    return str(error)


def make_auth() -> OAuth:
    return OAuth(client_id="app", scopes="read", timeout=10.0, dpop=False, open_browser=False,
                 authorize=lambda url: url)


def use_auth(auth: OAuth, url: str) -> bool:
    """The auth plug-in interface as a transport calls it (type-checked only: it would go online)."""
    headers: Dict[str, str] = auth.headers("POST", url)
    return auth.challenge("POST", url, 401, {}, headers)


if __name__ == "__main__":
    print(mcp_min.__version__, handle(RequestTimeout("late")), make_auth())
    status: int = use_client(sys.argv[1:] or [sys.executable, "examples/calc.py"])
    status = status or use_group(sys.argv[1:] or [sys.executable, "examples/calc.py"])
    sys.exit(status if len(sys.argv) > 1 else main(["tools", "--", sys.executable, "examples/calc.py"]))
