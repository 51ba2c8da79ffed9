"""Build hook (pyproject.toml): the wheel carries mcp_min's types for type checkers.

A distribution of one module cannot carry a ``py.typed`` marker (PEP 561 marks packages), so mypy
would take an installed ``mcp_min`` as untyped ("import-untyped").  PEP 561's other form is a
stub-only package: the wheel also ships the same file as ``mcp_min-stubs/__init__.pyi``, which type
checkers read for ``import mcp_min`` and Python never imports.  A hook because hatchling's
``force-include`` moves a file rather than copying it: the module itself must stay ``mcp_min.py``.
"""
import os
import shutil
import tempfile

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class TypedWheel(BuildHookInterface):
    def initialize(self, version, build_data):
        if self.target_name != "wheel":
            return
        self._folder = tempfile.mkdtemp(prefix="mcp_min-stubs-")
        stub = os.path.join(self._folder, "__init__.pyi")
        shutil.copyfile(os.path.join(self.root, "mcp_min.py"), stub)
        build_data["force_include"][stub] = "mcp_min-stubs/__init__.pyi"

    def finalize(self, version, build_data, artifact_path):
        if getattr(self, "_folder", None):
            shutil.rmtree(self._folder, ignore_errors=True)
