"""The file reads as its header says ("How it works"), checked on its source, not by hand lists:

- the layers above ``Client`` (constants, errors, the JSON-RPC core, protocol helpers, transports,
  session) never name an add-on: no identifier defined in an add-on's section, and no "task" or
  "tasks" key; the session meets add-ons only through ``_Extension``'s hooks;
- ``Client`` names an add-on's class only to ask the session for it (``extension(kind)``);
- the add-on sections that still sit above ``Client`` can move below it: the file imports with
  them there, and every add-on still registers;
- every thread name started in the code is in the header's thread list.

A section is what a banner opens (``# ----`` lines around ``# Title``) or a sub-banner
(``# -- title ----``) inside one; it is an add-on when its title says "an add-on".
"""
import ast
import os
import re
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_PATH = os.path.join(ROOT, "mcp_min.py")
RULE = re.compile(r"^# -{20,}$")
SUB_BANNER = re.compile(r"^# -- (.*?) -*$")

with open(SOURCE_PATH, encoding="utf-8") as f:
    SOURCE = f.read()
LINES = SOURCE.splitlines()
TREE = ast.parse(SOURCE)


def sections(lines=LINES):
    """[(first line index, last line index, title, is_top)]: banners and sub-banners, in order.
    A sub-section ends where the next sub-banner or banner begins; a banner's section where the
    next banner does."""
    marks = []  # (index of its first line, title, is_top)
    i = 0
    while i < len(lines) - 1:
        if RULE.match(lines[i]) and lines[i + 1].startswith("# ") and not RULE.match(lines[i + 1]):
            marks.append((i, lines[i + 1][2:], True))
            i += 2
            while i < len(lines) and not RULE.match(lines[i]):  # (the rest of the banner, to its closing rule)
                i += 1
        else:
            m = SUB_BANNER.match(lines[i])
            if m:
                marks.append((i, m.group(1), False))
        i += 1
    out = []
    for n, (start, title, top) in enumerate(marks):
        later = [s for s, _, t in marks[n + 1:] if t or not top]
        out.append((start, (later[0] if later else len(lines)) - 1, title, top))
    return out


SECTIONS = sections()
CLIENT_LINE = next(start for start, _, title, top in SECTIONS if top and title.startswith("The Client API"))


def addon_at(index):
    """Whether line ``index`` (0-based) is inside an add-on's section or sub-section."""
    return any(start <= index <= end and "an add-on" in title for start, end, title, _ in SECTIONS)


def defined_names(node):
    """The top-level names a module-level statement defines (TYPE_CHECKING blocks included)."""
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    if isinstance(node, ast.If):
        return set().union(*(defined_names(n) for n in node.body + node.orelse))
    return set()


ADDON_NAMES = set().union(*(defined_names(n) for n in TREE.body if addon_at(n.lineno - 1)))
CORE = [n for n in TREE.body if n.lineno - 1 < CLIENT_LINE and not addon_at(n.lineno - 1)]


def test_the_sections_are_found():
    titles = [title for _, _, title, top in SECTIONS if top]
    assert [t.split(":")[0] for t in titles[:3]] == ["Constants", "Errors", "JSON-RPC core"]
    addons = [title for _, _, title, _ in SECTIONS if "an add-on" in title]
    assert len(addons) >= 5  # skills, JSON Schema, tasks, groups, OAuth
    for name in ["_Tasks", "Task", "TASKS_EXTENSION", "_Validation", "_tool_checks", "_schema_check",
                 "_compile_schema", "_Skills", "SKILLS_EXTENSION", "_skill_files", "_skill_md", "Group", "OAuth"]:
        assert name in ADDON_NAMES
    for name in ["_Session", "_Inbox", "_Dispatcher", "Future", "_Extension", "_EXTENSIONS", "Client", "Subscription"]:
        assert name not in ADDON_NAMES


def identifiers(node):
    """(line, identifier) of every Name and Attribute, annotations included, and (line, repr)
    of every "task"/"tasks" string."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            yield sub.lineno, sub.id
        elif isinstance(sub, ast.Attribute):
            yield sub.lineno, sub.attr
        elif isinstance(sub, ast.Constant) and sub.value in ("task", "tasks"):
            yield sub.lineno, repr(sub.value)


def test_the_layers_above_client_never_name_an_addon():
    assert len(CORE) > 100
    found = sorted({(line, ident) for node in CORE for line, ident in identifiers(node)
                    if ident in ADDON_NAMES or ident in ("'task'", "'tasks'")})
    assert found == [], "\n".join("mcp_min.py:%d names %s" % f for f in found)


def test_the_core_sections_are_there():
    # the scan would pass vacuously if the core were not scanned
    names = set().union(*(defined_names(n) for n in CORE))
    assert {"_settles_at_once", "Future", "_Dispatcher", "_Inbox", "_Session", "_Extension", "_Extensions",
            "_StdioTransport", "_HttpEngine"} <= names


def annotation_nodes(tree):
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if a is not None and a.annotation is not None:
                    ids.update(id(n) for n in ast.walk(a.annotation))
            if node.returns is not None:
                ids.update(id(n) for n in ast.walk(node.returns))
        elif isinstance(node, ast.AnnAssign):
            ids.update(id(n) for n in ast.walk(node.annotation))
    return ids


def test_client_reaches_addons_only_through_the_session():
    client = next(n for n in TREE.body if isinstance(n, ast.ClassDef) and n.name == "Client")
    in_annotations = annotation_nodes(client)
    as_key = set()
    for node in ast.walk(client):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "extension":
            as_key.update(id(a) for a in node.args if isinstance(a, ast.Name))
    keys = set()
    wrong = []
    for node in ast.walk(client):
        if isinstance(node, ast.Name) and node.id in ADDON_NAMES and id(node) not in in_annotations:
            if id(node) in as_key:
                keys.add(node.id)
            else:
                wrong.append("mcp_min.py:%d: Client uses %s" % (node.lineno, node.id))
    assert wrong == []
    assert {"_Tasks", "_Skills"} <= keys  # (what the scan saw: it did look)


def moved_below_client():
    """The source with every add-on section above ``Client`` moved to just above the first
    add-on section below it (what the lead's reordering will do)."""
    above = [(s, e) for s, e, title, _ in SECTIONS if "an add-on" in title and e < CLIENT_LINE]
    below = min(s for s, _, title, top in SECTIONS if top and "an add-on" in title and s > CLIENT_LINE)
    moving = set()
    for s, e in above:
        moving.update(range(s, e + 1))
    kept = [line for i, line in enumerate(LINES[:below]) if i not in moving]
    moved = [line for i, line in enumerate(LINES[:below]) if i in moving]
    return above, "\n".join(kept + ["", ""] + moved + ["", ""] + LINES[below:]) + "\n"


def test_the_addons_above_client_can_move_below_it():
    above, source = moved_below_client()  # (once none sits above Client, the file as it is)
    assert source.count("\n") == SOURCE.count("\n") + 4
    module = types.ModuleType("mcp_min_moved")
    module.__file__ = SOURCE_PATH
    exec(compile(source, "mcp_min_moved.py", "exec"), module.__dict__)  # nothing above Client needs them
    assert sorted(k.__name__ for k in module._EXTENSIONS) == ["_Skills", "_Tasks", "_Validation"]
    assert module._EXTENSIONS and all(issubclass(k, module._Extension) for k in module._EXTENSIONS)


def test_every_registered_addon_is_an_extension_of_an_addon_section():
    import mcp_min
    registered = {k.__name__ for k in mcp_min._EXTENSIONS}
    assert registered == {"_Skills", "_Tasks", "_Validation"}
    assert registered <= ADDON_NAMES
    appends = [n for n in TREE.body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
               and isinstance(n.value.func, ast.Attribute) and n.value.func.attr == "append"
               and isinstance(n.value.func.value, ast.Name) and n.value.func.value.id == "_EXTENSIONS"]
    assert len(appends) == len(registered) and all(addon_at(n.lineno - 1) for n in appends)


THREAD_NAME = re.compile(r"^mcp_min-[a-z]+(-[a-z]+)*(-%[sd])?$")


def thread_names():
    """Every thread name in the code: a "mcp_min-..." string, or the format it is made with."""
    doc = ast.get_docstring(TREE, clean=False)
    names = set()
    for node in ast.walk(TREE):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value != doc \
                and THREAD_NAME.match(node.value):
            names.add(node.value)
    return names


def test_the_header_lists_every_thread():
    names = thread_names()
    assert {"mcp_min-events", "mcp_min-reader-%d", "mcp_min-sse-post-%s", "mcp_min-oauth-callback",
            "mcp_min-oauth-connection", "mcp_min-task-%s", "mcp_min-settle-%s"} <= names
    doc = ast.get_docstring(TREE)
    missing = []
    for name in sorted(names):
        base = re.sub(r"-%[sd]$", "", name)
        shown = base + "-<" if base != name else "``%s``" % base
        if shown not in doc:
            missing.append(name)
    assert missing == []
