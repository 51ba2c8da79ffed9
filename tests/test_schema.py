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

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import fake_server  # noqa: E402
import mcp_min  # noqa: E402
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


def test_the_suite_is_there():
    assert len(SUITE_FILES) >= 80
    assert os.path.exists(os.path.join(SUITE, "LICENSE")) and os.path.exists(os.path.join(SUITE, "PROVENANCE.md"))


def test_the_suite_totals_the_readme_gives():
    passed = refused = 0
    for name in SUITE_FILES:
        ok, failed, groups = run_suite_file(name)
        with open(os.path.join(SUITE, name), encoding="utf-8") as f:
            refused += sum(len(g["tests"]) for g in json.load(f) if g["description"] in groups)
        passed += ok
    assert (len(SUITE_FILES), passed, refused) == (91, 2229, 35)


@pytest.mark.parametrize("name", SUITE_FILES)
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
def test_json_semantics(schema, value, ok):
    assert (check(schema, value) is None) is ok


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
def test_patterns_follow_ecma_262(pattern, text, ok):
    assert (check({"pattern": pattern}, text) is None) is ok


@pytest.mark.parametrize("pattern", ["^(a+)+$", "(a|aa)*b", "^(\\w+\\s?)*$", "((ab)*c)+", "(a?){2,}"])
def test_patterns_that_backtrack_exponentially_are_refused(pattern):
    with pytest.raises(mcp_min._SchemaError, match="backtrack exponentially"):
        mcp_min._compile_schema({"pattern": pattern})
    with pytest.raises(mcp_min._SchemaError):
        mcp_min._compile_schema({"patternProperties": {pattern: {}}})


@pytest.mark.parametrize("pattern, text, ok", [
    ("^[a-z0-9]+(\\.[a-z0-9]+)*$", "api.example.com", True), ("^[a-z0-9]+(\\.[a-z0-9]+)*$", "api..com", False),
    ("^\\w+(-\\w+)*$", "a-b-c", True), ("^(\\.[a-z]?\\.)*$", "..", True),
])
def test_repeated_groups_whose_rounds_start_at_a_fixed_character_are_checked(pattern, text, ok):
    # Each round starts at a literal character that nothing repeated inside it can match.
    assert (check({"pattern": pattern}, text) is None) is ok


@pytest.mark.parametrize("pattern", ["^(x[a-z]+)*$", "^(\\.[^x]*)*$", "^(-(-a)*)*$"])
def test_a_lead_character_the_body_can_match_again_is_no_guard(pattern):
    with pytest.raises(mcp_min._SchemaError, match="backtrack exponentially"):
        mcp_min._compile_schema({"pattern": pattern})


@pytest.mark.parametrize("pattern", ["^(a)\\1$", "\\p{L}", "\\k<x>", "(?i)a", "[a", "(a", "a)", "*a", "x" * 2000])
def test_patterns_mcp_min_cannot_check_are_refused_with_a_reason(pattern):
    with pytest.raises(mcp_min._SchemaError, match="pattern"):
        mcp_min._compile_schema({"pattern": pattern})


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


def test_a_ref_cycle_that_never_descends_ends_as_a_mismatch():
    for schema in ({"$ref": "#"}, {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}):
        pointer, problem = check(schema, 1)
        assert "mcp_min gives up" in problem
    # It is never a pass, not even under not (giving up is no verdict that not could invert).
    assert "gives up" in check({"not": {"$ref": "#"}}, 1)[1]


def test_branching_refs_end_within_the_step_budget():
    schema = {"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}
    assert "gives up" in check(schema, 1)[1]  # 2 ** SCHEMA_MAX_DEPTH paths; the budget ends it


def test_deep_and_large_schemas_are_refused():
    deep = True
    for _ in range(mcp_min.SCHEMA_MAX_DEPTH + 5):
        deep = {"items": deep}
    with pytest.raises(mcp_min._SchemaError, match="levels"):
        mcp_min._compile_schema(deep)
    wide = {"anyOf": [{"type": "string"}] * (mcp_min.SCHEMA_MAX_NODES + 1)}
    with pytest.raises(mcp_min._SchemaError, match="subschemas"):
        mcp_min._compile_schema(wide)


def test_deep_values_under_a_recursive_schema():
    tree = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}
    value = {}
    for _ in range(20):
        value = {"kids": [value]}
    assert check(tree, value) is None
    for _ in range(mcp_min.SCHEMA_MAX_DEPTH):
        value = {"kids": [value]}
    assert "levels of nesting" in check(tree, value)[1]


def test_a_huge_enum_compiles_once_and_checks_by_lookup():
    values = ["v%d" % i for i in range(100000)]
    compiled = mcp_min._compile_schema({"enum": values})
    assert compiled("v99999") is None and compiled("v100000") is not None


def test_refs_stay_inside_the_document():
    with pytest.raises(mcp_min._SchemaError, match="never fetches"):
        mcp_min._compile_schema({"$ref": "https://example.com/schema.json"})
    with pytest.raises(mcp_min._SchemaError, match="nothing there"):
        mcp_min._compile_schema({"$ref": "#/$defs/missing"})
    with pytest.raises(mcp_min._SchemaError, match="not supported"):
        mcp_min._compile_schema({"$recursiveRef": "#"})
    assert check({"$id": "https://example.com/s", "$defs": {"n": {"$anchor": "n", "type": "integer"}},
                  "items": {"$ref": "https://example.com/s#n"}}, [1, "x"]) == ("/1", '"x" is not of type integer')


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
