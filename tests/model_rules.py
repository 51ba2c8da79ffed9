"""The model providers' documented rules for a request's ``tools``, as checks (not a test module
itself): tests/test_model_tools.py runs them on what tools_for() makes, and the stand-in model
server of tests/interop/test_model_sdks.py on every request the real SDKs send.

    tool_problems(provider, tools) -> a list of what breaks the rules (empty: all is well)

Rules (the providers' API references, in our words): a function name is 1 to 64 of
``a-zA-Z0-9_-``, unique; a tool definition has only the keys the API knows; the schema is an
object at the top, with no anyOf/oneOf/allOf/not/enum there (Anthropic refuses those, OpenAI
wants an object).  OpenAI strict mode (``strict: true``): every object has
``additionalProperties: false`` and names all its properties in ``required``; each part has a
type (or anyOf, enum, const, $ref); only the keywords strict mode reads; $ref only to "#" or the
root's $defs, and alone (OpenAI refuses a $ref with keywords beside it); at most 10 levels
of nesting.  Strict or not, OpenAI refuses an array schema without ``items``.  Anthropic reads
input_schema as JSON Schema 2020-12 (so no draft-04 forms: boolean ``exclusiveMinimum`` /
``exclusiveMaximum``, array-form ``items``); its own strict tool use takes a smaller subset than
OpenAI's (as we read its documentation: no numeric bounds, no string lengths, ``minItems`` 0 or 1
only), which is why tools_for sends Anthropic no ``strict`` at all.
"""
import re
from urllib.parse import unquote

NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}\Z")
KEYS = {"openai": {"type", "function"}, "openai-responses": {"type", "name", "description", "parameters", "strict"},
        "anthropic": {"name", "description", "input_schema", "strict"}}
FUNCTION_KEYS = {"name", "description", "parameters", "strict"}
TOP_REFUSED = {"anyOf", "oneOf", "allOf", "not", "enum", "const", "if", "then", "else"}
STRICT_KEYS = {"type", "description", "enum", "const", "anyOf", "$ref", "$defs", "properties", "required",
               "additionalProperties", "items", "minItems", "maxItems", "pattern", "format", "minimum", "maximum",
               "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}


def tool_problems(provider, tools):
    problems = []
    names = []
    for tool in tools:
        if not isinstance(tool, dict) or set(tool) - KEYS[provider]:
            problems.append("unknown keys in %r" % (tool,))
            continue
        if provider == "openai":
            if tool.get("type") != "function" or set(tool.get("function", {})) - FUNCTION_KEYS:
                problems.append("not a function tool: %r" % (tool,))
                continue
            tool = tool["function"]
            schema, strict = tool.get("parameters"), tool.get("strict") is True
        elif provider == "openai-responses":
            if tool.get("type") != "function" or not isinstance(tool.get("strict"), bool):
                problems.append("a Responses tool needs type function and strict true or false: %r" % (tool,))
            schema, strict = tool.get("parameters"), tool.get("strict") is True
        else:
            schema, strict = tool.get("input_schema"), tool.get("strict") is True
        name = tool.get("name")
        names.append(name)
        if not isinstance(name, str) or not NAME.match(name):
            problems.append("bad name %r" % (name,))
        if not isinstance(tool.get("description", ""), str):
            problems.append("%s: description not a string" % name)
        problems.extend("%s: %s" % (name, p) for p in schema_problems(schema, strict))
        problems.extend("%s: %s" % (name, p) for p in plain_problems(provider, schema, strict))
    if len(set(names)) != len(names):
        problems.append("names repeat: %r" % (names,))
    return problems


def schema_problems(schema, strict):
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return ["the schema is no object at the top"]
    problems = ["%s at the top" % k for k in TOP_REFUSED & set(schema)]
    if "properties" not in schema:
        problems.append("an object schema without properties at the top")
    if strict:
        defs = schema.get("$defs") or {}
        walk(schema, defs, 0, problems, "")
        for key, sub in defs.items():
            walk(sub, defs, 1, problems, "/$defs/" + key)
    return problems


def walk(node, defs, depth, problems, where):
    if depth > 10:
        problems.append("%s: nested deeper than 10" % where)
        return
    if not isinstance(node, dict):
        problems.append("%s: not a schema object" % where)
        return
    extra = set(node) - STRICT_KEYS
    if extra:
        problems.append("%s: keywords strict mode refuses: %s" % (where, sorted(extra)))
    if "$defs" in node and where:
        problems.append("%s: $defs below the top" % where)
    if not set(node) & {"type", "anyOf", "enum", "const", "$ref"}:
        problems.append("%s: no type" % where)
    ref = node.get("$ref")
    if ref is not None and len(node) > 1:
        problems.append("%s: a $ref with keywords beside it: %s" % (where, sorted(set(node) - {"$ref"})))
    name = unquote(ref[8:]).replace("~1", "/").replace("~0", "~") if isinstance(ref, str) else None
    if ref is not None and ref != "#" and not (ref.startswith("#/$defs/") and name in defs):
        problems.append("%s: $ref %r names nothing in $defs" % (where, ref))
    if "format" in node and node["format"] not in FORMATS:
        problems.append("%s: format %r" % (where, node["format"]))
    kinds = node.get("type")
    if "object" in (kinds if isinstance(kinds, list) else [kinds]):
        if node.get("additionalProperties") is not False:
            problems.append("%s: an object without additionalProperties false" % where)
        if sorted(node.get("required", [])) != sorted(node.get("properties", {})):
            problems.append("%s: not every property required" % where)
    for key, sub in (node.get("properties") or {}).items():
        walk(sub, defs, depth + 1, problems, "%s/properties/%s" % (where, key))
    if "items" in node:
        walk(node["items"], defs, depth + 1, problems, where + "/items")
    for i, sub in enumerate(node.get("anyOf") or []):
        walk(sub, defs, depth + 1, problems, "%s/anyOf/%d" % (where, i))


MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
ONES = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
        "additionalItems", "unevaluatedItems", "unevaluatedProperties")
ANTHROPIC_STRICT_REFUSED = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
                            "maxLength", "maxItems"}


def subschemas(node, where="", depth=0):
    """Every part of a schema (where, node), this one first."""
    if not isinstance(node, dict) or depth > 50:
        return
    yield where, node
    for key in MAPS:
        if isinstance(node.get(key), dict):
            for name, sub in node[key].items():
                yield from subschemas(sub, "%s/%s/%s" % (where, key, name), depth + 1)
    for key in LISTS + ("items",):
        if isinstance(node.get(key), list):
            for i, sub in enumerate(node[key]):
                yield from subschemas(sub, "%s/%s/%d" % (where, key, i), depth + 1)
    for key in ONES:
        if isinstance(node.get(key), dict):
            yield from subschemas(node[key], "%s/%s" % (where, key), depth + 1)


def plain_problems(provider, schema, strict):
    problems = []
    for where, node in subschemas(schema):
        kinds = node.get("type")
        if provider != "anthropic" and "array" in (kinds if isinstance(kinds, list) else [kinds]) \
                and "items" not in node:
            problems.append("%s: an array schema without items" % where)
        if provider == "anthropic":
            old = [k for k in ("exclusiveMinimum", "exclusiveMaximum") if isinstance(node.get(k), bool)]
            if isinstance(node.get("items"), list):
                old.append("array-form items")
            if old:
                problems.append("%s: not JSON Schema 2020-12: %s" % (where, ", ".join(old)))
            if strict:
                refused = sorted(ANTHROPIC_STRICT_REFUSED & set(node))
                if node.get("minItems", 0) not in (0, 1):
                    refused.append("minItems %r" % node["minItems"])
                if refused:
                    problems.append("%s: keywords Anthropic's strict tool use refuses: %s" % (where, refused))
    return problems
