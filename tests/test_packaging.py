"""The container installs the tool the way CI proves it: a wheel built from the source, never the tree itself.

.ci/check-installed.sh (run by `make test`) builds the wheel with `python -m build`, installs it in a fresh
venv and runs it; Docker is not available here, so these tests hold deploy/Dockerfile to the same install.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
CHECK_SCRIPT = ROOT / ".ci" / "check-installed.sh"


def instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) per Dockerfile instruction, continuation lines joined, comments dropped."""
    result: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pending = f"{pending} {line}" if pending else line
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip()
            continue
        keyword, _, arguments = pending.partition(" ")
        result.append((keyword.upper(), arguments.strip()))
        pending = ""
    return result


def stages(text: str) -> list[list[tuple[str, str]]]:
    found: list[list[tuple[str, str]]] = []
    for keyword, arguments in instructions(text):
        if keyword == "FROM":
            found.append([])
        found[-1].append((keyword, arguments))
    return found


def shell_commands(script: str) -> list[list[str]]:
    """The simple commands of a shell snippet (split on &&, ||, ; and newlines), as words, without redirections."""
    commands = []
    for part in re.split(r"&&|\|\||;|\n", script):
        words = [w for w in shlex.split(part, comments=True) if not re.match(r"^\d*>", w)]
        if words:
            commands.append(words)
    return commands


def pip_installs(commands: list[list[str]]) -> list[list[str]]:
    """The arguments of every `pip install` / `python -m pip install` among the commands."""
    found = []
    for words in commands:
        for i in range(len(words) - 1):
            if Path(words[i]).name == "pip" and words[i + 1] == "install":
                found.append(words[i + 2:])
                break
    return found


def installs_only_wheels(arguments: list[str]) -> bool:
    targets = [a for a in arguments if not a.startswith("-")]
    editable = any(a in ("-e", "--editable") or a.startswith("--editable=") for a in arguments)
    return bool(targets) and not editable and all(re.sub(r"\[[\w,-]+\]$", "", t).endswith(".whl") for t in targets)


def builds_a_wheel(words: list[str]) -> str | None:
    """The output directory if the command builds a wheel (`python -m build` or `pip wheel`), else None."""
    joined = " ".join(words)
    if "-m build" not in joined and not re.search(r"\bpip wheel\b", joined):
        return None
    for flag in ("--outdir", "-o", "--wheel-dir", "-w"):
        if flag in words:
            return words[words.index(flag) + 1]
    return "dist"


def check_dockerfile(text: str) -> None:
    all_stages = stages(text)
    assert len(all_stages) >= 2, "a builder stage makes the wheel; the runtime stage installs it"
    builder, runtime = all_stages[0], all_stages[-1]
    builder_name = builder[0][1].split()[-1]
    assert re.search(r"\sAS\s", builder[0][1], re.IGNORECASE), "the builder stage is named"

    outdirs = [d for k, a in builder if k == "RUN" for words in shell_commands(a) if (d := builds_a_wheel(words))]
    assert outdirs, "the builder stage builds a wheel"

    copied = [a for k, a in runtime if k == "COPY" and f"--from={builder_name}" in a]
    assert copied and any(outdirs[0].rstrip("/") in a and ".whl" in a.split()[1] for a in copied), \
        "the runtime stage copies the built wheel from the builder"
    assert not any(k in ("COPY", "ADD") and "--from=" not in a for k, a in runtime), \
        "no source tree in the runtime stage"

    installs = pip_installs([w for k, a in runtime if k == "RUN" for w in shell_commands(a)])
    assert installs, "the runtime stage pip-installs the tool"
    for arguments in installs:
        assert installs_only_wheels(arguments), f"installs something other than the wheel: pip install {arguments}"


def test_dockerfile_builds_a_wheel_and_installs_only_that_wheel() -> None:
    check_dockerfile(DOCKERFILE.read_text())


def test_check_script_installs_the_wheel_the_same_way() -> None:
    script = CHECK_SCRIPT.read_text().replace("\\\n", " ")
    lines = [line for line in script.splitlines() if "-m build" in line or "pip install" in line]
    commands = [words for line in lines for words in shell_commands(line)]
    assert any(builds_a_wheel(words) for words in commands), "the script builds the wheel with python -m build"
    assert re.search(r'^wheels=\("\$TMP"/dist/\*\.whl\)$', script, re.MULTILINE)
    assert re.search(r"^wheel=\$\{wheels\[0\]\}$", script, re.MULTILINE)
    installs = pip_installs(commands)
    assert installs == [["--quiet", "--disable-pip-version-check", "${wheel}[demo]"]]
    # Both build with `python -m build` and install the resulting *.whl with pip.
    docker = DOCKERFILE.read_text()
    assert "python -m build" in docker and "pip install /tmp/dist/*.whl" in docker


def test_the_checks_reject_installing_the_source_tree() -> None:
    for reverted in ("pip install .", "pip install -e .", "pip install --editable .[demo]",
                     "pip install /tmp/dist/*.whl .", "python -m pip install /src"):
        (arguments,) = pip_installs(shell_commands(reverted))
        assert not installs_only_wheels(arguments), reverted
    (arguments,) = pip_installs(shell_commands('pip install "/tmp/x/a-0.1-py3-none-any.whl[demo]"'))
    assert installs_only_wheels(arguments)


@pytest.mark.parametrize("replacement", ["pip install .", "pip install -e .", "pip install /tmp/dist/*.whl ."])
def test_a_dockerfile_reverted_to_installing_the_source_fails(replacement: str) -> None:
    original = DOCKERFILE.read_text()
    reverted = original.replace("pip install /tmp/dist/*.whl", replacement)
    assert reverted != original
    with pytest.raises(AssertionError):
        check_dockerfile(reverted)
