"""Helpers shared by the test files (not a test module itself)."""
import sys
import time


def _under_wine():
    """True on Wine (.ci/test-windows), whose ntdll exports wine_get_version; Windows' does not."""
    if sys.platform != "win32":
        return False
    try:
        import ctypes
        return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")
    except (ImportError, OSError):
        return False


UNDER_WINE = _under_wine()
# Why a test that holds on Windows is skipped on Wine (the windows-latest workflow jobs run it).
WINE_SLOW_START = ("Wine 8.0 takes a second or more to start a Python process (Windows about 0.1 s), "
                   "longer than this test's deliberately short deadline")


def wait_for(predicate, timeout=10.0):
    """Poll a condition that another thread or process makes true.  Not a sleep for correctness:
    the assertion is the condition itself; the deadline only bounds a failure."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()
