"""mcp_min's JSON Schema validator: the official test suite, hostile schemas, and the calls
that use it (tool output against outputSchema, elicitation answers against requestedSchema).

The suite files are vendored under tests/schema-test-suite/ (see its PROVENANCE.md).  Every
case of every kept file must pass; the few groups the validator refuses to compile (a remote
document, \\p{...}) are named below, so a new refusal fails the test too.
"""
import copy
import glob
import json
import logging
import os
import pickle
import sys
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import fake_server  # noqa: E402
import mcp_min  # noqa: E402
from testsupport import run_cli  # noqa: E402
from mcp_min import Client, McpError, OutputValidationError, ToolError  # noqa: E402

SUITE = os.path.join(HERE, "schema-test-suite")

# (file, group description) -> why the validator refuses that group's schema.
REFUSED = {
    ("draft2020-12/defs.json", "validate definition against metaschema"): "points outside the schema",
    ("draft2020-12/ref.json", "remote ref, containing refs itself"): "points outside the schema",
    ("draft7/definitions.json", "validate definition against metaschema"): "points outside the schema",
    ("draft7/ref.json", "remote ref, containing refs itself"): "points outside the schema",
}
for _group in ("strict-tree schema, guards against misspelled properties",
               "tests for implementation dynamic anchor and reference link",
               "$ref and $dynamicAnchor are independent of order - $defs first",
               "$ref and $dynamicAnchor are independent of order - $ref first",
               "$ref to $dynamicRef finds detached $dynamicAnchor"):
    REFUSED[("draft2020-12/dynamicRef.json", _group)] = "points outside the schema"  # (remote documents)
for _group in ("patterns always use unicode semantics with pattern", "pattern with non-ASCII digits",
               "patterns always use unicode semantics with patternProperties",
               "patternProperties with non-ASCII digits"):
    REFUSED[("draft2020-12/optional/ecmascript-regex.json", _group)] = "\\p{...}"

SUITE_FILES = sorted(os.path.relpath(p, SUITE).replace(os.sep, "/")
                     for p in glob.glob(os.path.join(SUITE, "*", "*.json")) + glob.glob(os.path.join(SUITE, "*", "*",
                                                                                                      "*.json")))


def run_suite_file(name):
    """(passed, failed descriptions, refused group descriptions) for one vendored file."""
    with open(os.path.join(SUITE, name), encoding="utf-8") as f:
        groups = json.load(f)
    passed, failed, refused = 0, [], {}
    for group in groups:
        try:
            check = mcp_min._compile_schema(group["schema"], draft7=name.startswith("draft7/"))
        except mcp_min._SchemaError as e:
            refused[group["description"]] = str(e)
            continue
        for case in group["tests"]:
            if (check(case["data"]) is None) == case["valid"]:
                passed += 1
            else:
                failed.append("%s / %s" % (group["description"], case["description"]))
    return passed, failed, refused


@pytest.mark.pure
def test_the_suite_is_there():
    assert len(SUITE_FILES) >= 80
    assert os.path.exists(os.path.join(SUITE, "LICENSE")) and os.path.exists(os.path.join(SUITE, "PROVENANCE.md"))


@pytest.mark.pure
def test_the_suite_totals_the_readme_gives():
    passed = refused = 0
    for name in SUITE_FILES:
        ok, failed, groups = run_suite_file(name)
        with open(os.path.join(SUITE, name), encoding="utf-8") as f:
            refused += sum(len(g["tests"]) for g in json.load(f) if g["description"] in groups)
        passed += ok
    assert (len(SUITE_FILES), passed, refused) == (91, 2229, 35)


@pytest.mark.parametrize("name", SUITE_FILES)
@pytest.mark.pure
def test_json_schema_test_suite(name):
    passed, failed, refused = run_suite_file(name)
    assert failed == []
    expected = {group: why for (file, group), why in REFUSED.items() if file == name}
    assert sorted(refused) == sorted(expected)
    for group, why in expected.items():
        assert why in refused[group]
    assert passed > 0 or refused


# ---------------------------------------------------------------------------
# The validator in memory
# ---------------------------------------------------------------------------

def check(schema, value):
    return mcp_min._compile_schema(schema)(value)


@pytest.mark.parametrize("schema, value, ok", [
    ({"type": "integer"}, 1.0, True), ({"type": "integer"}, True, False), ({"type": "number"}, False, False),
    ({"const": 1}, 1.0, True), ({"const": 1}, True, False), ({"enum": [False]}, 0, False),
    ({"enum": [[1, {"a": 2.0}]]}, [1.0, {"a": 2}], True), ({"uniqueItems": True}, [1, 1.0], False),
    ({"uniqueItems": True}, [1, True], True), ({"multipleOf": 0.01}, 19.99, True), ({"multipleOf": 0.01}, 19.999, False),
    ({"type": "array", "prefixItems": [{"type": "string"}]}, ("a", 2), True),  # a tuple from a callback
    ({"type": "object"}, {1, 2}, False),  # a set is not JSON
])
@pytest.mark.pure
def test_json_semantics(schema, value, ok):
    assert (check(schema, value) is None) is ok


@pytest.mark.pure
def test_the_pointer_and_message_name_the_first_difference():
    schema = {"type": "object", "properties": {"rows": {"type": "array", "items": {
        "type": "object", "properties": {"a/b": {"type": "string"}, "n": {"minimum": 0}}}}}}
    assert check(schema, {"rows": [{"a/b": "x", "n": 1}, {"a/b": 5}]}) == ("/rows/1/a~1b", "5 is not of type string")
    assert check(schema, {"rows": [{"n": -1}]}) == ("/rows/0/n", "-1 is less than 0")
    assert check({"required": ["x"]}, {}) == ("", "the required property 'x' is missing")
    assert check({"additionalProperties": False}, {"y": 1}) == ("/y", "the property 'y' is not allowed")


@pytest.mark.parametrize("pattern, text, ok", [
    ("^\\d+$", "123", True), ("^\\d+$", "\u0663", False),  # \d is ASCII in ECMA-262
    ("^\\w$", "\u00e9", False), ("^a$", "a\n", False),  # $ is the very end
    ("^.$", "\u2028", False), ("^(?<x>a)b$", "ab", True), ("^[^]$", "\n", True), ("[]", "a", False),
    ("^\\cJ$", "\n", True), ("a{2", "a{2", True),  # a brace that is no quantifier is a literal
])
@pytest.mark.pure
def test_patterns_follow_ecma_262(pattern, text, ok):
    assert (check({"pattern": pattern}, text) is None) is ok


@pytest.mark.parametrize("pattern", ["^(a+)+$", "(a|aa)*b", "^(\\w+\\s?)*$", "((ab)*c)+", "(a?){2,}"])
@pytest.mark.pure
def test_patterns_that_backtrack_exponentially_are_refused(pattern):
    with pytest.raises(mcp_min._SchemaError, match="backtrack exponentially"):
        mcp_min._compile_schema({"pattern": pattern})
    with pytest.raises(mcp_min._SchemaError):
        mcp_min._compile_schema({"patternProperties": {pattern: {}}})


@pytest.mark.parametrize("pattern, text, ok", [
    ("^[a-z0-9]+(\\.[a-z0-9]+)*$", "api.example.com", True), ("^[a-z0-9]+(\\.[a-z0-9]+)*$", "api..com", False),
    ("^\\w+(-\\w+)*$", "a-b-c", True), ("^(\\.[a-z]?\\.)*$", "..", True),
])
@pytest.mark.pure
def test_repeated_groups_whose_rounds_start_at_a_fixed_character_are_checked(pattern, text, ok):
    # Each round starts at a literal character that nothing repeated inside it can match.
    assert (check({"pattern": pattern}, text) is None) is ok


@pytest.mark.parametrize("pattern", ["^(x[a-z]+)*$", "^(\\.[^x]*)*$", "^(-(-a)*)*$"])
@pytest.mark.pure
def test_a_lead_character_the_body_can_match_again_is_no_guard(pattern):
    with pytest.raises(mcp_min._SchemaError, match="backtrack exponentially"):
        mcp_min._compile_schema({"pattern": pattern})


@pytest.mark.parametrize("pattern", ["^(a)\\1$", "\\p{L}", "\\k<x>", "(?i)a", "[a", "(a", "a)", "*a", "x" * 2000])
@pytest.mark.pure
def test_patterns_mcp_min_cannot_check_are_refused_with_a_reason(pattern):
    with pytest.raises(mcp_min._SchemaError, match="pattern"):
        mcp_min._compile_schema({"pattern": pattern})


@pytest.mark.pure
def test_a_polynomial_pattern_checks_only_strings_it_can_afford():
    # Six repeats: a backtracking search is about n**6 steps on a string that fails at its end.
    pattern = "^a*a*a*a*a*a*$"
    longest = int(mcp_min.SCHEMA_PATTERN_WORK ** (1 / 6.0))
    assert check({"pattern": pattern}, "a" * longest) is None
    pointer, problem = check({"pattern": pattern}, "a" * (longest + 1) + "!")
    assert pointer == "" and "too long to check against the pattern" in problem
    assert check({"patternProperties": {pattern: {}}}, {"a" * 100: 1})[1].startswith("the property name is too long")
    # One repeat, anchored: any length.
    assert check({"pattern": "^[a-z]+$"}, "a" * 1000000) is None


@pytest.mark.pure
def test_a_ref_cycle_that_never_descends_ends_as_a_mismatch():
    for schema in ({"$ref": "#"}, {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}):
        pointer, problem = check(schema, 1)
        assert "mcp_min gives up" in problem
    # It is never a pass, not even under not (giving up is no verdict that not could invert).
    assert "gives up" in check({"not": {"$ref": "#"}}, 1)[1]


@pytest.mark.pure
def test_branching_refs_end_within_the_step_budget():
    schema = {"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}
    assert "gives up" in check(schema, 1)[1]  # 2 ** SCHEMA_MAX_DEPTH paths; the budget ends it


@pytest.mark.pure
def test_deep_and_large_schemas_are_refused():
    deep = True
    for _ in range(mcp_min.SCHEMA_MAX_DEPTH + 5):
        deep = {"items": deep}
    with pytest.raises(mcp_min._SchemaError, match="levels"):
        mcp_min._compile_schema(deep)
    wide = {"anyOf": [{"type": "string"}] * (mcp_min.SCHEMA_MAX_NODES + 1)}
    with pytest.raises(mcp_min._SchemaError, match="subschemas"):
        mcp_min._compile_schema(wide)


@pytest.mark.pure
def test_deep_values_under_a_recursive_schema():
    tree = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}
    value = {}
    for _ in range(20):
        value = {"kids": [value]}
    assert check(tree, value) is None
    for _ in range(mcp_min.SCHEMA_MAX_DEPTH):
        value = {"kids": [value]}
    assert "levels of nesting" in check(tree, value)[1]


@pytest.mark.pure
def test_a_huge_enum_compiles_once_and_checks_by_lookup():
    values = ["v%d" % i for i in range(100000)]
    compiled = mcp_min._compile_schema({"enum": values})
    assert compiled("v99999") is None and compiled("v100000") is not None


@pytest.mark.pure
def test_refs_stay_inside_the_document():
    with pytest.raises(mcp_min._SchemaError, match="never fetches"):
        mcp_min._compile_schema({"$ref": "https://example.com/schema.json"})
    with pytest.raises(mcp_min._SchemaError, match="nothing there"):
        mcp_min._compile_schema({"$ref": "#/$defs/missing"})
    with pytest.raises(mcp_min._SchemaError, match="not supported"):
        mcp_min._compile_schema({"$recursiveRef": "#"})
    assert check({"$id": "https://example.com/s", "$defs": {"n": {"$anchor": "n", "type": "integer"}},
                  "items": {"$ref": "https://example.com/s#n"}}, [1, "x"]) == ("/1", '"x" is not of type integer')


@pytest.mark.pure
def test_output_validation_error_pickles_and_copies_with_its_attributes():
    error = OutputValidationError("t", "/a", "1 is not of type string", {"structuredContent": {"a": 1}})
    assert isinstance(error, ToolError) and isinstance(error, McpError)
    assert str(error) == "tool 't': structuredContent/a does not match its outputSchema: 1 is not of type string"
    for twin in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(twin) is OutputValidationError and str(twin) == str(error) and vars(twin) == vars(error)
    assert "OutputValidationError" in mcp_min.__all__


# ---------------------------------------------------------------------------
# Calls: tool output and elicitation answers, in both eras, against tests/fake_server.py on a
# thread of this process (Client.over())
# ---------------------------------------------------------------------------

SHAPE = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
         "additionalProperties": False}
ERAS = {"handshake": {}, "2026-07-28": {"discover": "modern"}}


def client_for(era, cfg=None, **options):
    """A Client.over() of tests/fake_server.py (config ``cfg``) on a thread, speaking ``era``."""
    return fake_server.client_for(dict(cfg or {}, **ERAS[era]), **options)


@pytest.fixture(params=sorted(ERAS))
def era(request):
    return request.param


def test_output_is_checked_once_the_tool_list_is_known(era):
    with client_for(era, {"output_schemas": {"echo": SHAPE, "text": SHAPE}}) as c:
        assert c.call("echo", n="not checked yet") == {"n": "not checked yet"}  # no list is fetched for it
        c.list_tools()
        assert c.call("echo", n=3) == {"n": 3}
        with pytest.raises(OutputValidationError) as info:
            c.call("echo", n="three")
        e = info.value
        assert (e.tool, e.pointer, e.problem) == ("echo", "/n", '"three" is not of type integer')
        assert e.result["structuredContent"] == {"n": "three"}
        with pytest.raises(OutputValidationError, match="structuredContent/m does not match"):
            c.call_tool("echo", {"n": 1, "m": 2})
        with pytest.raises(OutputValidationError) as info:
            c.call("text", text="no structured content")
        assert (info.value.pointer, info.value.problem) == ("", "the result has none")
        assert c.submit("echo", n=4).result() == {"n": 4}
        with pytest.raises(OutputValidationError):
            c.submit("echo", n=[]).result()
        with pytest.raises(OutputValidationError):
            c.request("tools/call", {"name": "echo", "arguments": {"n": 1.5}})
        with pytest.raises(OutputValidationError):
            c.start("echo", n="a result at once").result()


def test_a_tool_without_an_output_schema_is_not_checked(era):
    with client_for(era, {"output_schemas": {"text": SHAPE}}) as c:
        c.list_tools()
        assert c.call("echo", anything=[1, 2]) == {"anything": [1, 2]}


def test_validate_false_passes_output_through(era):
    with client_for(era, {"output_schemas": {"echo": SHAPE}}, validate=False) as c:
        c.list_tools()
        assert c.call("echo", n="three") == {"n": "three"}


def test_validate_takes_another_validator(era):
    seen = []

    class Wrong(Exception):
        absolute_path = ["n"]

    def validate(instance, schema):
        seen.append((instance, schema))
        if instance.get("n") == 0:
            raise Wrong("zero is right out")

    with client_for(era, {"output_schemas": {"echo": SHAPE}}, validate=validate) as c:
        c.list_tools()
        assert c.call("echo", n="any") == {"n": "any"}
        with pytest.raises(OutputValidationError) as info:
            c.call("echo", n=0)
    assert (info.value.pointer, info.value.problem) == ("/n", "zero is right out")
    assert seen[0] == ({"n": "any"}, SHAPE)


@pytest.mark.pure
def test_validate_must_be_a_bool_or_callable():
    with pytest.raises(ValueError, match="validate must be"):
        Client(["/nonexistent/never-started"], validate="yes")  # refused before anything starts


def test_a_schema_mcp_min_cannot_check_is_logged_and_not_checked(era, caplog):
    hostile = {"type": "object", "properties": {"n": {"type": "string", "pattern": "^(a+)+$"}}}
    with client_for(era, {"output_schemas": {"echo": hostile, "text": SHAPE}}) as c:
        with caplog.at_level(logging.WARNING, logger="mcp_min"):
            c.list_tools()
        assert c.call("echo", n="aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!") == {"n": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}
        with pytest.raises(OutputValidationError):
            c.call("text", text="the other tool is still checked")
    assert any("not checking the output of tool 'echo'" in r.getMessage() and "exponentially" in r.getMessage()
               for r in caplog.records)


def test_tools_list_changed_drops_the_old_schemas():
    with client_for("handshake", {"output_schemas": {"echo": SHAPE}}) as c:
        c.list_tools()
        with pytest.raises(OutputValidationError):
            c.call("echo", n="x")
        c.call("log")  # the server says tools/list_changed before it answers
        assert c.call("echo", n="x") == {"n": "x"}  # an old schema is no longer believed
        c.list_tools()
        with pytest.raises(OutputValidationError):
            c.call("echo", n="x")


AGE = {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}, "required": ["age"]}


def test_elicitation_answers_are_checked_before_they_are_sent(caplog):
    answers = [{"action": "accept", "content": {"age": 42}}, {"action": "accept", "content": {"age": "old"}},
               {"action": "decline"}]
    ask = {"method": "elicitation/create", "params": {"mode": "form", "message": "age?", "requestedSchema": AGE}}
    with client_for("handshake", elicitation=lambda params: answers.pop(0)) as c:
        assert c.call("ask", ask)["result"] == {"action": "accept", "content": {"age": 42}}
        with caplog.at_level(logging.WARNING, logger="mcp_min"):
            reply = c.call("ask", ask)
        assert "result" not in reply
        assert reply["error"]["message"] == ("the elicitation answer's content/age does not match the "
                                             'requestedSchema: "old" is not of type integer')
        assert c.call("ask", ask)["result"] == {"action": "decline"}
    assert any("not sending the elicitation answer" in r.getMessage() for r in caplog.records)


def test_elicitation_answers_pass_unchecked_with_validate_false():
    ask = {"method": "elicitation/create", "params": {"mode": "form", "message": "age?", "requestedSchema": AGE}}
    with client_for("handshake", validate=False,
                    elicitation=lambda params: {"action": "accept", "content": {"age": "old"}}) as c:
        assert c.call("ask", ask)["result"]["content"] == {"age": "old"}


def test_2026_input_answers_are_checked_before_they_are_sent():
    # ask_input asks for {"name": string} and the roots; a number is no name.
    with client_for("2026-07-28", roots=["/tmp"],
                    elicitation=lambda params: {"action": "accept", "content": {"name": 7}}) as c:
        with pytest.raises(McpError, match="content/name does not match the requestedSchema: 7 is not of type string"):
            c.call("ask_input")
    with client_for("2026-07-28", roots=["/tmp"],
                    elicitation=lambda params: {"action": "accept", "content": {"name": "Ada"}}) as c:
        assert c.call("ask_input")["responses"]["who"]["content"] == {"name": "Ada"}


def test_the_readme_example():
    weather = {"type": "object", "properties": {"temperature": {"type": "number"}}}
    with client_for("handshake", {"output_schemas": {"echo": weather}}) as client:
        client.list_tools()
        try:
            client.call("echo", temperature="warm")
        except OutputValidationError as e:
            assert isinstance(e, ToolError)
            assert (e.tool, e.pointer, e.problem) == ("echo", "/temperature", '"warm" is not of type number')
            assert e.result["structuredContent"] == {"temperature": "warm"}
        else:
            raise AssertionError("no OutputValidationError")


TASK_SERVER = os.path.join(HERE, "task_server.py")
SLEPT_TEXT = {"type": "object", "properties": {"slept": {"type": "string"}}}  # it sends a number


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_the_result_of_a_task_is_checked(version):
    argv = [sys.executable, TASK_SERVER, json.dumps({"output_schema": SLEPT_TEXT})]
    with Client(argv, protocol_version="auto" if version == "2026-07-28" else version) as c:
        assert c.protocol_version == version
        c.list_tools()
        with pytest.raises(OutputValidationError) as info:
            c.call("work", s=0, poll_ms=100)  # a task, followed by call()
        assert (info.value.tool, info.value.pointer) == ("work", "/slept")
        task = c.start("work", s=0, poll_ms=100)
        with pytest.raises(OutputValidationError, match="structuredContent/slept does not match"):
            task.result()


def test_jsonschema_validate_plugs_in(era):
    jsonschema = pytest.importorskip("jsonschema")
    with client_for(era, {"output_schemas": {"echo": SHAPE}}, validate=jsonschema.validate) as c:
        c.list_tools()
        assert c.call("echo", n=3) == {"n": 3}
        with pytest.raises(OutputValidationError) as info:
            c.call("echo", n="three")
    assert (info.value.pointer, info.value.problem) == ("/n", "'three' is not of type 'integer'")


# ---------------------------------------------------------------------------
# Hostile schemas stay bounded and blame no one wrongly: every walk over a schema is bounded in
# depth, all the work of one check in time (SCHEMA_MAX_SECONDS), and a number past a float's range
# (1e400 is JSON) makes a schema mcp_min cannot check: logged, never an error of the answer.
# ---------------------------------------------------------------------------

def nested(keyword, levels, leaf=None):
    """A schema nested ``levels`` times through ``keyword``."""
    schema = {"type": "string"} if leaf is None else leaf
    for _ in range(levels):
        if keyword in ("allOf", "anyOf"):
            schema = {keyword: [schema]}
        elif keyword in ("properties", "$defs"):
            schema = {keyword: {"a": schema}}
        else:  # items, not
            schema = {keyword: schema}
    return schema


NESTINGS = ["properties", "items", "allOf", "anyOf", "not", "$defs"]
# JSON levels of a deep schema sent to a client: past Python's recursion limit for a walk of two frames
# a level, within what json decodes on every interpreter here (about 990 levels).
JSON_LEVELS = 600


@pytest.mark.parametrize("keyword", NESTINGS)
def test_a_deep_output_schema_is_logged_and_list_tools_goes_on(keyword, caplog):
    levels = JSON_LEVELS // (2 if keyword in ("properties", "allOf", "anyOf", "$defs") else 1)
    deep = {"type": "object", "properties": {"n": nested(keyword, levels)}}
    with client_for("handshake", {"output_schemas": {"echo": deep, "text": SHAPE}}) as c:
        with caplog.at_level(logging.WARNING, logger="mcp_min"):
            c.list_tools()
            c.list_tools(refresh=True)  # the new schema is compared with the kept one: the same, no new log
        assert c.call("echo", n=1) == {"n": 1}
        with pytest.raises(OutputValidationError):
            c.call("text", text="the other tool is still checked")
    logged = [r.getMessage() for r in caplog.records if "not checking the output of tool 'echo'" in r.getMessage()]
    assert len(logged) == 1 and "levels" in logged[0]


@pytest.mark.parametrize("keyword", NESTINGS)
@pytest.mark.pure
def test_schemas_deeper_than_any_recursion_limit_are_refused_and_compared(keyword):
    with pytest.raises(mcp_min._SchemaError, match="levels"):
        mcp_min._compile_schema(nested(keyword, 5000))
    assert mcp_min._same_json(nested(keyword, 5000), nested(keyword, 5000))
    assert not mcp_min._same_json(nested(keyword, 5000), nested(keyword, 5000, {"type": "integer"}))


@pytest.mark.pure
def test_ref_chains_and_deep_constants_are_refused_by_their_depth():
    chain = {"d%d" % i: {"$ref": "#/$defs/d%d" % (i + 1)} for i in range(5000)}
    chain["d5000"] = {"type": "string"}
    with pytest.raises(mcp_min._SchemaError, match="levels"):
        mcp_min._compile_schema({"$defs": chain, "$ref": "#/$defs/d0"})
    short = {"$defs": dict((k, chain[k]) for k in ("d4990", "d4991", "d4992", "d4993", "d4994", "d4995", "d4996",
                                                      "d4997", "d4998", "d4999", "d5000")), "$ref": "#/$defs/d4990"}
    assert check(short, "x") is None and check(short, 1) == ("", "1 is not of type string")
    deep = "x"
    for _ in range(5000):
        deep = [deep]
    for schema in ({"const": deep}, {"enum": [1, deep]}):
        with pytest.raises(mcp_min._SchemaError, match="nests deeper than"):
            mcp_min._compile_schema(schema)


@pytest.mark.pure
def test_values_nested_past_the_recursion_limit_are_shown_never_raised():
    deep = "x"
    for _ in range(20000):
        deep = [deep]
    assert mcp_min._dumps_for_humans(deep) == "[" * 20000 + '"x"' + "]" * 20000  # (json.dumps and repr() raise)
    assert mcp_min._short(deep) == "[" * 80 + "..."
    shown = mcp_min._dumps_for_humans_indented(deep)  # (the CLI's; 3.14's json.dumps manages it, indented)
    assert "".join(shown.split()) == "[" * 20000 + '"x"' + "]" * 20000


@pytest.mark.pure
def test_a_signature_shows_a_deep_input_schema_to_a_bounded_depth():
    x = {"type": "string"}
    for _ in range(5000):
        x = {"type": "array", "items": x}
    tool = {"name": "deep", "inputSchema": {"type": "object", "properties": {"x": x, "y": nested("anyOf", 5000)}}}
    shown = mcp_min._signature(tool)
    assert shown.startswith("deep(x?: array[array[array[") and "..." in shown and len(shown) < 300


# (keyword, a number past a float's range): json reads 1e400 as inf, -1e400 as -inf
PAST_FLOATS = [("minLength", "1e400"), ("maxLength", "1e400"), ("minItems", "1e400"), ("maxItems", "1e400"),
               ("minProperties", "1e400"), ("maxProperties", "1e400"), ("maxContains", "1e400"),
               ("multipleOf", "1e400"), ("minimum", "1e400"), ("minimum", "-1e400"), ("maximum", "-1e400"),
               ("exclusiveMinimum", "1e400"), ("exclusiveMaximum", "-1e400"), ("const", "[1e400]"),
               ("enum", "[1, -1e400]"), ("minLength", "NaN"), ("multipleOf", "NaN")]  # (NaN: no JSON, read all the same)


@pytest.mark.parametrize("keyword, number", PAST_FLOATS)
@pytest.mark.pure
def test_a_number_past_a_floats_range_makes_a_schema_mcp_min_cannot_check(keyword, number):
    schema = json.loads('{"contains": {}, "%s": %s}' % (keyword, number))
    with pytest.raises(mcp_min._SchemaError, match=keyword):
        mcp_min._compile_schema(schema)


@pytest.mark.pure
def test_a_value_past_a_floats_range_is_never_blamed(caplog):
    big = json.loads("1e400")
    assert check({"type": "integer"}, big) is None  # 10 ** 400 is an integer
    assert check({"maximum": 10}, big) is not None  # and more than 10
    with caplog.at_level(logging.WARNING, logger="mcp_min"):
        assert check({"multipleOf": 3}, big) is None  # which multiples it has is lost in inf
        assert check({"uniqueItems": True}, json.loads("[1e400, 1e401]")) is None  # both read as inf
    assert sum("it passes unchecked" in r.getMessage() for r in caplog.records) == 2
    assert check({"uniqueItems": True}, [1, 1.0])[1] == "item 1 repeats item 0 (uniqueItems)"


@pytest.mark.pure
def test_a_brace_of_other_digits_is_a_literal_not_a_crash():
    # "\u00b2".isdigit() is true, and int("\u00b2") raises: such a brace is no quantifier (ECMA-262: a literal).
    assert check({"pattern": "^a{\u00b2}$"}, "a{\u00b2}") is None
    assert check({"pattern": "^a{1,\u00b2}$"}, "a") == ("", "\"a\" does not match the pattern '^a{1,\u00b2}$'")


@pytest.mark.pure
def test_relative_refs_resolve_against_a_urn_base():
    # RFC 3986 resolves a reference against any base; urllib's urljoin() leaves it as it is under urn:.
    for schema in (
            {"$id": "urn:example:a/b", "$defs": {"s": {"$id": "c", "type": "string"}},
             "properties": {"a": {"$ref": "urn:example:a/c"}}},
            {"$id": "urn:example:a/b", "$defs": {"s": {"$id": "urn:example:a/c", "type": "string"}},
             "properties": {"a": {"$ref": "c"}}},
            {"$id": "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed", "$defs": {"s": {"$id": "s.json", "type": "string"}},
             "properties": {"a": {"$ref": "urn:s.json"}}},
            {"$id": "urn:example:a/b", "$defs": {"s": {"$id": "c", "$defs": {"t": {"type": "string"}}}},
             "properties": {"a": {"$ref": "urn:example:a/c#/$defs/t"}}},
            {"$id": "https://example.com/root/s.json", "$defs": {"x": {"$id": "../other/./t.json", "type": "string"}},
             "properties": {"a": {"$ref": "https://example.com/other/t.json"}}},  # (and hierarchical ones as ever)
            {"$id": "https://example.com/root/s.json", "$defs": {"x": {"$id": "https://example.com/t", "type": "string"}},
             "properties": {"a": {"$ref": "../t#"}}}):
        assert check(schema, {"a": "x"}) is None
        assert check(schema, {"a": 1}) == ("/a", "1 is not of type string"), schema


SLOW = "^[a-z]*[a-z]*c|^a"  # accepted (degree 2: strings up to 4472 characters), and each of these
LONG = "a" * 4472           # matches only after trying every way to split it in two: ~0.2 s a search
SLOW_CASES = {  # (schema, value): each search (or branch) bounded, their sum many seconds
    "many items": ({"type": "array", "items": {"pattern": SLOW}}, [LONG] * 300),
    "one string, many patterns": ({"allOf": [{"pattern": SLOW}] * 300}, LONG),
    "many keys": ({"patternProperties": {SLOW: {}}}, {LONG[:-4] + "%04d" % i: i for i in range(300)}),
    "many branches": ({"items": {"anyOf": [{"const": i} for i in range(5000)] + [{}]}}, [-1] * 1800),
}


@pytest.mark.parametrize("shape", sorted(SLOW_CASES))
@pytest.mark.pure
def test_all_the_work_of_one_check_counts_against_one_budget(shape, monkeypatch, caplog):
    monkeypatch.setattr(mcp_min, "SCHEMA_MAX_SECONDS", 0.05, raising=False)  # (PyPy does "many branches" in 0.15 s)
    schema, value = SLOW_CASES[shape]
    with caplog.at_level(logging.WARNING, logger="mcp_min"):
        assert mcp_min._compile_schema(schema)(value) is None  # passed, unchecked
    assert any(r.getMessage() == "not checking a value: checking it takes more than 0.05 s "
               "(SCHEMA_MAX_SECONDS); it passes unchecked" for r in caplog.records)


@pytest.mark.parametrize("shape", ["many items", "one string, many patterns"])
def test_a_call_ends_by_its_deadline_however_slow_its_check(shape, caplog):
    schema, value = SLOW_CASES[shape]
    with client_for("handshake", {"output_schemas": {"echo": {"type": "object", "properties": {"v": schema}}}},
                    timeout=3) as c:
        c.list_tools()
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="mcp_min"):
            assert c.call("echo", v=value) == {"v": value}
        assert time.monotonic() - started < 3 + 2  # (one check: SCHEMA_MAX_SECONDS and one search more)
    assert any("not checking the output of tool 'echo': checking it takes more than" in r.getMessage()
               for r in caplog.records)


def raw_client(tools="[]", structured="{}", ask=None, **options):
    """A Client.over() of a handshake-era server on a thread that writes JSON text as given, so the
    client meets numbers no encoder here writes (1e400).  ``tools``: the text of tools/list's tools;
    ``structured``: of every tools/call's structuredContent, unless ``ask``: the text of the params of
    an elicitation/create that tools/call sends first, whose answer becomes the structuredContent."""
    to_server, from_client = os.pipe()
    to_client, from_server = os.pipe()

    def serve():
        with os.fdopen(to_server, "rb") as reader, os.fdopen(from_server, "wb") as writer:
            def send(text):
                writer.write(text.encode("utf-8") + b"\n")
                writer.flush()
            call = None
            for line in reader:
                msg = json.loads(line)
                method, mid = msg.get("method"), json.dumps(msg.get("id"))
                if method is None and msg.get("id") == "ask":  # the client's answer to elicitation/create
                    send('{"jsonrpc":"2.0","id":%s,"result":{"content":[],"structuredContent":%s}}'
                         % (call, json.dumps(msg.get("result", msg.get("error")))))
                elif method == "initialize":
                    send('{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%s,"capabilities":{"tools":{}},'
                         '"serverInfo":{"name":"raw","version":"1"}}}'
                         % (mid, json.dumps(msg["params"]["protocolVersion"])))
                elif method == "tools/list":
                    send('{"jsonrpc":"2.0","id":%s,"result":{"tools":%s}}' % (mid, tools))
                elif method == "tools/call" and ask is not None:
                    call = mid
                    send('{"jsonrpc":"2.0","id":"ask","method":"elicitation/create","params":%s}' % ask)
                elif method == "tools/call":
                    send('{"jsonrpc":"2.0","id":%s,"result":{"content":[],"structuredContent":%s}}' % (mid, structured))
                elif msg.get("id") is not None:
                    send('{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}' % mid)

    threading.Thread(target=serve, daemon=True, name="raw-server").start()
    return Client.over(to_client, from_client, **options)


# (keyword, number) an output schema has: each made the committed version raise, or blame the answer 7
PAST_FLOATS_IN_OUTPUT = [("minLength", "1e400"), ("maxItems", "1e400"), ("minProperties", "1e400"),
                         ("multipleOf", "1e400"), ("minimum", "1e400"), ("maximum", "-1e400"),
                         ("exclusiveMaximum", "-1e400")]


@pytest.mark.parametrize("keyword, number", PAST_FLOATS_IN_OUTPUT)
def test_an_output_schema_with_1e400_is_logged_and_never_blames_the_answer(keyword, number, caplog):
    tools = ('[{"name":"t","inputSchema":{"type":"object"},"outputSchema":{"type":"object",'
             '"properties":{"v":{"%s":%s}}}}]' % (keyword, number))
    with raw_client(tools, '{"v":7}') as c:
        with caplog.at_level(logging.WARNING, logger="mcp_min"):
            c.list_tools()
        assert c.call("t") == {"v": 7}
    assert any("not checking the output of tool 't'" in r.getMessage() and keyword in r.getMessage()
               for r in caplog.records)


@pytest.mark.parametrize("keyword, number, content", [
    ("minLength", "1e400", {"name": "Ada"}), ("maxLength", "1e400", {"name": "Ada"}),
    ("multipleOf", "1e400", {"name": 7}), ("minimum", "1e400", {"name": 7})])
def test_an_elicitation_whose_schema_has_1e400_sends_the_accepted_answer(keyword, number, content, caplog):
    ask = ('{"mode":"form","message":"name?","requestedSchema":{"type":"object","properties":{"name":{"%s":%s}}}}'
           % (keyword, number))
    with raw_client(ask=ask, elicitation=lambda params: {"action": "accept", "content": content}) as c:
        with caplog.at_level(logging.WARNING, logger="mcp_min"):
            assert c.call("t") == {"action": "accept", "content": content}
    assert any("not checking an elicitation answer" in r.getMessage() and keyword in r.getMessage()
               for r in caplog.records)


DEEP_INPUT_SERVER = r'''
import json, sys
schema = open(sys.argv[1]).read()  # (as text: PyPy's json cannot write it)
for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "deep", "version": "1"}}
    elif method == "tools/list":
        print('{"jsonrpc": "2.0", "id": %s, "result": {"tools": [{"name": "deep", "inputSchema": %s}]}}'
              % (json.dumps(mid), schema), flush=True)
        continue
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}), flush=True)
'''


def test_the_cli_shows_a_deep_input_schema(tmp_path):
    levels = 700  # (within what every client here reads; past the recursion limit for a walk of two frames a level)
    schema = tmp_path / "schema.json"
    schema.write_text('{"type":"object","properties":{"x":' + '{"type":"array","items":' * levels
                      + '{"type":"string"}' + "}" * levels + "}}")
    server = tmp_path / "deep_server.py"
    server.write_text(DEEP_INPUT_SERVER)
    out = run_cli("tools", "--", sys.executable, str(server), str(schema), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode().strip() == "deep(x?: %s...%s)" % ("array[" * mcp_min.SIGNATURE_MAX_DEPTH,
                                                                    "]" * mcp_min.SIGNATURE_MAX_DEPTH)
