"""cfn-lint over CloudFormation snippets (a plan's `--as cloudformation`: a template's Resources)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml


def lint_all(snippets: dict[str, str], tmp: Path) -> dict[str, str]:
    """cfn-lint once over many snippets (it starts slowly): what it says about each, by name."""
    paths = {}
    for name, text in snippets.items():
        parsed = yaml.safe_load(text)
        if not (isinstance(parsed, dict) and parsed.get("Resources")):
            continue
        path = tmp / f"{name}.yaml"
        path.write_text(yaml.safe_dump({"AWSTemplateFormatVersion": "2010-09-09", **parsed}, sort_keys=False))
        paths[name] = path
    if not paths:
        return {}
    linter = shutil.which("cfn-lint", path=str(Path(sys.executable).parent))
    assert linter, "cfn-lint is a dev dependency"
    result = subprocess.run([linter, "--format", "parseable", *map(str, paths.values())], capture_output=True,
                            text=True, timeout=600)
    said = {name: "\n".join(line for line in result.stdout.splitlines() if line.startswith(f"{path}:"))
            for name, path in paths.items()}
    assert result.returncode == 0 or any(said.values()), result.stdout + result.stderr
    return {name: text for name, text in said.items() if text}
