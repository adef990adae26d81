"""Package discovery, the one thing pyproject.toml cannot say here.

setuptools finds every `auditor*` package (the tool, and `auditor_emulator`, the local AWS
emulator `audit demo` runs); `auditor.templates` is added by name because its source
is the top-level templates/ directory (mapped in pyproject.toml's [tool.setuptools.package-dir]),
which discovery cannot see. Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["auditor", "auditor.*", "auditor_emulator", "auditor_emulator.*"]),
                "auditor.templates"])
