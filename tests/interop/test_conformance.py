"""mcp_min (through conformance_client.py) against the MCP conformance suite's mock servers.

One conformance CLI run per scenario.  A run passes only when the CLI says so *and*
its checks.json holds the expected number of real SUCCESS checks with no FAILURE or
WARNING (``initialize`` passes vacuously with a client that never connects).
Auth scenarios run as suites against an expected-failures baseline
(conformance-expected-failures-<version>.yml, empty since DPoP and workload identity
landed): the run fails on a new failure and on a listed scenario that now passes, so
the list can only shrink.  0.2.0 runs its auth suites under both revisions (the default
2025-11-25 wire and --spec-version 2026-07-28), and each revision's frozen requirement
set (--requirements), which also runs the extension scenarios (auth/dpop, auth/dpop-nonce,
auth/wif-jwt-bearer, ...) at that revision's wire.
"""

import glob
import json
import os
import re
import subprocess
import sys

import pytest

import peers
from testsupport import NO_SITE

pytestmark = pytest.mark.skipif(bool(peers.npm_missing()), reason=peers.npm_missing() or "")

CLIENT = os.path.join(peers.HERE, "conformance_client.py")
# Seconds for one CLI run, under the watchdog's 120 s per test (tests/conftest.py); and for each
# client it starts.  A suite starts its clients all at once: with the other test processes busy,
# some took longer than the CLI's default 30 s (seen here under a load average of 9).
RUN_TIMEOUT = 110
CLIENT_TIMEOUT_MS = 90000

# (suite version, --spec-version or None for the default 2025-11-25, scenario, SUCCESS checks,
#  check ids that must be among them)
SCENARIOS = [
    ("0.1.16", None, "initialize", 1, ["mcp-client-initialization"]),
    ("0.1.16", None, "tools_call", 1, ["tool-add-numbers"]),
    ("0.1.16", None, "elicitation-sep1034-client-defaults", 5, [
        "client-elicitation-sep1034-string-default", "client-elicitation-sep1034-integer-default",
        "client-elicitation-sep1034-number-default", "client-elicitation-sep1034-enum-default",
        "client-elicitation-sep1034-boolean-default"]),
    ("0.1.16", None, "sse-retry", 3, ["client-sse-graceful-reconnect", "client-sse-retry-timing",
                                      "client-sse-last-event-id"]),
    # 0.2.0: every 2026-07-28 client scenario (auth apart) ...
    ("0.2.0", "2026-07-28", "tools_call", 2, ["tool-add-numbers"]),
    ("0.2.0", "2026-07-28", "request-metadata", 8, []),
    ("0.2.0", "2026-07-28", "sep-2322-client-request-state", 5, ["sep-2322-client-request-state-echoed"]),
    ("0.2.0", "2026-07-28", "http-standard-headers", 9, ["sep-2243-client-includes-standard-headers"]),
    ("0.2.0", "2026-07-28", "http-custom-headers", 18, ["sep-2243-client-supports-custom-headers",
                                                         "sep-2243-client-omit-null"]),
    ("0.2.0", "2026-07-28", "http-invalid-tool-headers", 12, ["sep-2243-client-reject-invalid-tool"]),
    ("0.2.0", "2026-07-28", "json-schema-ref-no-deref", 1, ["sep-2106-no-network-ref-deref"]),
    ("0.2.0", "2026-07-28", "json-schema-2020-12-preservation", 9, []),
    # ... and its 2025-11-25 ones.
    ("0.2.0", None, "initialize", 1, ["mcp-client-initialization"]),
    ("0.2.0", None, "tools_call", 2, ["tool-add-numbers"]),
    ("0.2.0", None, "elicitation-sep1034-client-defaults", 5, ["client-elicitation-sep1034-enum-default"]),
    ("0.2.0", None, "sse-retry", 3, ["client-sse-retry-timing", "client-sse-last-event-id"]),
    ("0.2.0", None, "json-schema-2020-12-preservation", 9, []),
    # ... and the skills extension (SEP-2640); extension scenarios run without --spec-version.
    ("0.2.0", None, "sep-2640-client-no-prefetch", 1, ["sep-2640-host-no-prefetch"]),
    ("0.2.0", None, "sep-2640-client-verify-digest", 1, ["sep-2640-host-verify-digest"]),
    ("0.2.0", None, "sep-2640-client-verify-size", 1, ["sep-2640-host-size-mismatch-failure"]),
    ("0.2.0", None, "sep-2640-client-verify-frontmatter", 1, ["sep-2640-host-frontmatter-comparison"]),
]

# Suites that together hold every auth/* client scenario of each version: (suite version,
# --spec-version or None for the default 2025-11-25, suite).  At 2026-07-28 the suite filter
# leaves backcompat and extensions empty; the requirement runs below cover the extensions.
BASELINE_SUITES = [(v, None, s) for v in ("0.1.16", "0.2.0") for s in ("auth", "backcompat", "draft", "extensions")] \
    + [("0.2.0", "2026-07-28", s) for s in ("auth", "draft")]
# Each revision's frozen client requirements, scored and extension scenarios, at its own wire.
REQUIREMENTS = ["2025-11-25", "2026-07-28"]
# The scenarios of SCENARIOS (suite 0.2.0) that those runs hold, by revision (seen in their output):
# their checks are read from there rather than run again (test_scenario_in_its_revisions_requirements).
REQUIRED_SCENARIOS = {
    "2025-11-25": {"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry",
                   "json-schema-2020-12-preservation"},
    "2026-07-28": {"tools_call", "request-metadata", "sep-2322-client-request-state", "http-standard-headers",
                   "http-custom-headers", "http-invalid-tool-headers", "json-schema-ref-no-deref",
                   "json-schema-2020-12-preservation"},
}


def _run(version, args, out_dir):
    if " " in sys.executable + CLIENT:  # (NO_SITE, testsupport: the client needs only this checkout)
        pytest.fail("the conformance CLI splits --command on spaces; %r has one" % (sys.executable + CLIENT))
    env = dict(os.environ, NODE_OPTIONS="--require " + peers.LOOPBACK_PRELOAD)
    env.pop("MCP_MIN_TRACE", None)
    argv = [peers.NODE22, peers.CONFORMANCE_JS[version], "client",
            "--command", " ".join([sys.executable] + NO_SITE + [CLIENT]), "--timeout", str(CLIENT_TIMEOUT_MS), "-o", str(out_dir)] + args
    try:
        proc = subprocess.run(argv, env=env, cwd=peers.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=RUN_TIMEOUT, start_new_session=True)
    except subprocess.TimeoutExpired as e:
        pytest.fail("conformance %s %s did not finish in %s s:\n%s" % (
            version, " ".join(args), RUN_TIMEOUT, (e.output or b"").decode("utf-8", "replace")[-3000:]))
    return proc.returncode, proc.stdout.decode("utf-8", "replace")


def _case_id(case):
    version, spec, scenario = case[:3]
    return "%s-%s-%s" % (version, spec or "default", scenario)


def _scenario_ids(cases):
    return [_case_id(c) for c in cases]


def _requirements_cover(case):
    """Whether this scenario runs in the requirements run of its revision (0.2.0, REQUIREMENTS)."""
    version, spec, scenario = case[:3]
    return version == "0.2.0" and scenario in REQUIRED_SCENARIOS.get(spec or "2025-11-25", ())


@pytest.mark.parametrize("version, spec, scenario, successes, must_pass",
                         [c for c in SCENARIOS if not _requirements_cover(c)],
                         ids=_scenario_ids([c for c in SCENARIOS if not _requirements_cover(c)]))
def test_scenario(tmp_path, version, spec, scenario, successes, must_pass):
    args = ["--scenario", scenario] + (["--spec-version", spec] if spec else [])
    code, output = _run(version, args, tmp_path)
    assert code == 0, output[-3000:]
    _check_scenario(tmp_path, scenario, successes, must_pass, output)


@pytest.mark.xdist_group("conformance-requirements")  # (one process runs each revision's suite once)
@pytest.mark.parametrize("version, spec, scenario, successes, must_pass",
                         [c for c in SCENARIOS if _requirements_cover(c)],
                         ids=_scenario_ids([c for c in SCENARIOS if _requirements_cover(c)]))
def test_scenario_in_its_revisions_requirements(requirements_run, version, spec, scenario, successes, must_pass):
    """The same checks as test_scenario, read from the requirements run of the scenario's revision,
    which runs it at that revision: each node process of the suite costs about a CPU-second."""
    code, output, out_dir = requirements_run(spec or "2025-11-25")
    _check_scenario(out_dir, scenario, successes, must_pass, output)


def _check_scenario(out_dir, scenario, successes, must_pass, output):
    found = glob.glob(os.path.join(str(out_dir), scenario + "-*", "checks.json"))
    assert found, "no checks.json written for %s:\n%s" % (scenario, output[-3000:])
    with open(found[0]) as f:
        checks = json.load(f)
    by_status = {}
    for check in checks:
        by_status.setdefault(check["status"], []).append(check)
    bad = by_status.get("FAILURE", []) + by_status.get("WARNING", [])
    assert not bad, "failed checks: %s\n%s" % (json.dumps(bad, indent=1)[:3000], output[-3000:])
    passed = [c["id"] for c in by_status.get("SUCCESS", [])]
    assert len(passed) == successes, "expected %d SUCCESS checks, got %s" % (successes, passed)
    assert set(must_pass) <= set(passed)


def _check_baseline(version, args, out_dir):
    baseline = os.path.join(peers.HERE, "conformance-expected-failures-%s.yml" % version)
    code, output = _run(version, args + ["--expected-failures", baseline], out_dir)
    _assert_baseline(version, code, output)
    return output


def _assert_baseline(version, code, output):
    baseline = "conformance-expected-failures-%s.yml" % version
    assert code == 0, "baseline %s no longer matches:\n%s" % (baseline, output[-4000:])
    assert "Baseline check passed" in output or "all failures are expected" in output, output[-2000:]
    totals = re.findall(r"Total: (\d+) passed, (\d+) failed", output)
    assert totals and int(totals[-1][0]) > 0, "no scenario ran:\n%s" % output[-2000:]
    assert "\u2717" not in output, output[-4000:]  # no failing scenario line, expected or not


@pytest.fixture(scope="module")
def requirements_run(tmp_path_factory):
    """requirements_run(revision) -> (exit code, output, output directory) of the suite's
    requirements run at that revision (against its expected failures): once per test process."""
    runs = {}

    def get(revision):
        if revision not in runs:
            out_dir = tmp_path_factory.mktemp("requirements-" + revision)
            baseline = os.path.join(peers.HERE, "conformance-expected-failures-0.2.0.yml")
            runs[revision] = _run("0.2.0", ["--requirements", revision, "--expected-failures", baseline],
                                  out_dir) + (out_dir,)
        return runs[revision]
    return get


@pytest.mark.parametrize("version, spec, suite", BASELINE_SUITES,
                         ids=["%s-%s-%s" % (v, sp or "default", s) for v, sp, s in BASELINE_SUITES])
def test_auth_expected_failures(tmp_path, version, spec, suite):
    _check_baseline(version, ["--suite", suite] + (["--spec-version", spec] if spec else []), tmp_path)


@pytest.mark.xdist_group("conformance-requirements")
@pytest.mark.parametrize("revision", REQUIREMENTS)
def test_requirements_of_each_revision(requirements_run, revision):
    code, output, _ = requirements_run(revision)
    _assert_baseline("0.2.0", code, output)
    for scenario in ("auth/dpop", "auth/dpop-nonce", "auth/wif-jwt-bearer"):
        assert re.search(r"\u2713 %s: \d+ passed, 0 failed" % re.escape(scenario), output), output[-4000:]
