"""Helpers shared by the test files (not a test module itself)."""
import time


def wait_for(predicate, timeout=10.0):
    """Poll a condition that another thread or process makes true.  Not a sleep for correctness:
    the assertion is the condition itself; the deadline only bounds a failure."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()
