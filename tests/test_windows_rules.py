"""Windows rules of the stdio transport, tested on every OS (issue 11 item 25): splitting a
command line, finding a program through PATHEXT, quoting for .cmd launchers, the process group
and taskkill, the writer thread that bounds a write, UTF-8 config files.  Real processes and
pipes only; the Windows-only branches run for real in the workflow's windows-latest jobs.
"""
import json
import os
import random
import shutil
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import mcp_min  # noqa: E402

BS = "\\"

# (command line, expected argv) -- Microsoft C runtime rules, see split_windows.
SPLIT_TABLE = [
    ("node server.js --port 3000", ["node", "server.js", "--port", "3000"]),
    ("npx -y @modelcontextprotocol/server-everything", ["npx", "-y", "@modelcontextprotocol/server-everything"]),
    ('"C:\\Program Files\\nodejs\\node.exe" "C:\\My Servers\\srv.js"',
     ["C:\\Program Files\\nodejs\\node.exe", "C:\\My Servers\\srv.js"]),
    ("C:\\tools\\srv.exe --root C:\\data\\ C:\\x", ["C:\\tools\\srv.exe", "--root", "C:\\data\\", "C:\\x"]),
    ('p "C:\\data dir\\\\"', ["p", "C:\\data dir\\"]),          # 2 backslashes + quote: 1 backslash, quote closes
    ('p a\\"b', ["p", 'a"b']),                                   # 1 backslash + quote: literal quote
    ('p a\\\\"b c"', ["p", "a\\b c"]),                           # 2 + quote: 1 backslash, quote opens
    ('p a\\\\\\"b', ["p", 'a\\"b']),                              # 3 + quote: 1 backslash and a literal quote
    ("p a\\\\\\b", ["p", "a\\\\\\b"]),                           # backslashes not before a quote: literal
    ('p d"e f"g h', ["p", "de fg", "h"]),                        # quotes inside an argument
    ('p "a""b c" d', ["p", 'a"b c', "d"]),                       # "" inside quotes (C runtime: stays quoted)
    ('p ""', ["p", ""]),                                         # an empty argument
    ('p "" x', ["p", "", "x"]),
    ("p \t a\tb   ", ["p", "a", "b"]),                           # spaces and tabs separate; trailing ignored
    ('p "unterminated arg', ["p", "unterminated arg"]),
    ("p 'single quoted'", ["p", "'single", "quoted'"]),          # single quotes are ordinary
    ("p a^b ^&", ["p", "a^b", "^&"]),                             # so are carets
    ('"C:\\dir\\"x y', ["C:\\dir\\x", "y"]),                    # program: backslashes literal, quotes group
    ('C:\\a" b"\\c.exe z', ["C:\\a b\\c.exe", "z"]),
    ("", []),
    ("   \t ", []),
]


@pytest.mark.parametrize("command, expected", SPLIT_TABLE)
def test_split_windows_table(command, expected):
    assert mcp_min._split_windows(command) == expected


def test_split_windows_undoes_list2cmdline():
    # subprocess.list2cmdline is how Popen quotes a list on Windows (available on every OS): what
    # it produces must split back into the same arguments.
    rng = random.Random(1108)
    alphabet = ['a', 'b', ' ', '\t', '\\', '"', "'", '^', '&', 'é', '☕']
    for _ in range(2000):
        args = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 8))) for _ in range(rng.randrange(1, 5))]
        assert mcp_min._split_windows(subprocess.list2cmdline(["prog.exe"] + args)) == ["prog.exe"] + args, args


def test_split_windows_is_not_shlex():
    import shlex
    command = "C:\\tools\\srv.exe --root C:\\data"
    assert shlex.split(command) != mcp_min._split_windows(command) == ["C:\\tools\\srv.exe", "--root", "C:\\data"]


def _which_3_12_0(files, pathext=(".exe", ".cmd")):
    """shutil.which as Python 3.12.0 behaves on Windows, over a set of existing file paths: the name
    as given first (even without an extension), then with each PATHEXT extension."""
    def which(cmd, path=None):
        folders = [""] if os.path.dirname(cmd) else [f for f in (path or "").split(os.pathsep) if f]
        for folder in folders:
            for name in [cmd] + [cmd + ext for ext in pathext]:
                if os.path.join(folder, name) in files:
                    return os.path.join(folder, name)
        return None
    return which


def test_resolve_program_applies_pathext_with_the_childs_path(monkeypatch):
    files = {os.path.join("nodejs", "npx"), os.path.join("nodejs", "npx.cmd"), os.path.join("py", "uvx.exe")}
    monkeypatch.setattr(shutil, "which", _which_3_12_0(files))
    monkeypatch.setenv("PATHEXT", ".COM;.EXE;.BAT;.CMD")
    env = {"Path": os.pathsep.join(["nodejs", "py"])}     # the variable's case does not matter
    # npm's extensionless shell script is passed over for the .cmd launcher beside it
    assert mcp_min._resolve_program("npx", env, None) == os.path.join("nodejs", "npx.cmd")
    assert mcp_min._resolve_program("uvx", env, None) == os.path.join("py", "uvx.exe")
    assert mcp_min._resolve_program("missing", env, None) == "missing"  # as given: the start error names it
    assert mcp_min._resolve_program("uvx", {"PATH": "elsewhere"}, None) == "uvx"  # the child's PATH, not ours
    # a relative path is taken relative to the child's cwd, as on POSIX
    assert mcp_min._resolve_program(os.path.join("bin", "srv"), {}, "proj") == os.path.join("bin", "srv")
    files.add(os.path.join("proj", "bin", "srv.exe"))
    assert mcp_min._resolve_program(os.path.join("bin", "srv"), {}, "proj") == os.path.join("proj", "bin", "srv.exe")


def test_resolve_program_with_the_real_shutil_which(tmp_path):
    exe = tmp_path / ("tool.exe" if os.name == "nt" else "tool")
    exe.write_bytes(b"")
    exe.chmod(0o755)
    found = mcp_min._resolve_program("tool", {"PATH": str(tmp_path)}, None)
    assert os.path.normcase(found) == os.path.normcase(str(exe))


@pytest.mark.parametrize("args", [
    ["-y", "@scope/server"],
    ["--url", "http://h/?a=1&b=2", "--name", "a|b", "x>y", "(1)", "a^b", "", "C:\\dir with space\\", "C:\\d\\\\"],
])
def test_batch_command_line_survives_cmd_and_the_c_runtime(args):
    line = mcp_min._batch_command_line("C:\\Program Files\\nodejs\\npx.cmd", args)
    assert mcp_min._split_windows(line) == ["C:\\Program Files\\nodejs\\npx.cmd"] + args
    # outside double quotes nothing that cmd.exe would act on is left
    outside = "".join(part for i, part in enumerate(line.split('"')) if i % 2 == 0)
    assert not set(outside) & set("&|<>^()")


@pytest.mark.parametrize("bad", ["100%", "%PATH%", 'say "hi"', "two\nlines"])
def test_batch_command_line_refuses_what_cmd_would_change(bad):
    with pytest.raises(ValueError):
        mcp_min._batch_command_line("npx.cmd", ["--x", bad])


def test_taskkill_comes_from_the_system_folder():
    argv = mcp_min._taskkill_argv(1234)
    assert argv[1:] == ["/T", "/F", "/PID", "1234"]
    assert argv[0].lower().endswith(os.path.join("system32", "taskkill.exe").lower())


def test_process_group_kwargs_start_a_real_process():
    proc = subprocess.Popen([sys.executable, "-c", "import os, sys; print(os.getpid())"],
                            stdout=subprocess.PIPE, **mcp_min._process_group())
    out, _ = proc.communicate(timeout=60)
    assert int(out) == proc.pid
    if os.name == "posix":
        assert "start_new_session" in mcp_min._process_group()


# A child that reads nothing until told (a line on its stderr says it is alive).
STALLED = "import sys, time; sys.stderr.buffer.write(b'up\\n'); sys.stderr.flush(); time.sleep(60)"


def _stalled_child():
    proc = subprocess.Popen([sys.executable, "-c", STALLED], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr.readline() == b"up\n"
    return proc


def test_pipe_writer_writes_when_the_pipe_has_room():
    proc = subprocess.Popen([sys.executable, "-c", "import sys; print(len(sys.stdin.buffer.read()))"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    writer = mcp_min._PipeWriter(proc.stdin.fileno(), "test-writer")
    assert writer.write(b"x" * 100000, time.monotonic() + 30) is True
    assert writer.write(b"y" * 10, time.monotonic() + 30) is True
    writer.close()
    proc.stdin.close()
    assert proc.stdout.read().strip() == b"100010"
    proc.wait(timeout=30)


def test_pipe_writer_gives_up_at_the_deadline_on_a_server_that_does_not_read():
    proc = _stalled_child()
    writer = mcp_min._PipeWriter(proc.stdin.fileno(), "test-writer")
    start = time.monotonic()
    assert writer.write(b"z" * (16 << 20), time.monotonic() + 1.0) is False   # far more than a pipe holds
    assert time.monotonic() - start < 10
    proc.kill()  # what the transport does then: it also frees the blocked write (broken pipe)
    proc.wait(timeout=30)
    with pytest.raises(OSError):
        writer.write(b"after\n", time.monotonic() + 30)
    writer.close()
    proc.stderr.close()


def test_config_files_read_as_utf8_with_or_without_bom(tmp_path):
    data = {"mcpServers": {"café": {"command": "node", "args": ["C:\\Users\\Zoë\\srv.js", "☕"]}}}
    text = json.dumps(data, ensure_ascii=False)
    for name, raw in (("plain.json", text.encode("utf-8")), ("bom.json", b"\xef\xbb\xbf" + text.encode("utf-8"))):
        path = tmp_path / name
        path.write_bytes(raw)
        entry = mcp_min._server_from_config(str(path), None)
        assert (entry["server"], entry["env"], entry["headers"]) == (["node", "C:\\Users\\Zoë\\srv.js", "☕"], {}, {})


def test_config_files_do_not_depend_on_the_locale(tmp_path):
    # A child whose locale encoding is ASCII (POSIX) or the ANSI code page (Windows).
    path = tmp_path / "cfg.json"
    path.write_bytes(json.dumps({"mcpServers": {"z": {"command": "Zoë ☕"}}}, ensure_ascii=False).encode("utf-8"))
    env = dict(os.environ, PYTHONUTF8="0", PYTHONCOERCECLOCALE="0", LC_ALL="C", LANG="C", PYTHONIOENCODING="utf-8")
    code = ("import sys; sys.path.insert(0, %r); import mcp_min; print(ascii(mcp_min._server_from_config(%r, None)['server']))"
            % (os.path.dirname(HERE), str(path)))
    done = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ascii(["Zoë ☕"])


def test_env_names_follow_the_platform():
    env = mcp_min._server_env({"Path": "x"}, False)
    assert env["Path"] == "x"
    if os.name == "nt":  # one variable, whatever its case: "Path" replaced PATH
        assert [k for k in env if k.upper() == "PATH"] == ["Path"]
    else:  # two variables
        assert ("PATH" in env) == ("PATH" in os.environ)
