"""Which config and history `audit` uses, said: `audit config` prints every setting with its source
(default, file, flag, env) and never a secret; a ./audit.toml that is not read is warned of; the
config file and history in use are named on stderr when they are not the defaults. And the bundled
emulator on its own (`audit emulator`), audited with a config of the user's, in processes of their own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config_file import CONTEXT_PREFIX
from auditor_emulator.fleet import demo_fleet

runner = CliRunner()
SECRET = "https://hooks.slack.com/services/T0SECRET/B0SECRET/xoxbPLANTEDsecret42"
PASSWORD = "pl4nted-smtp-passw0rd"


def test_audit_config_says_each_source_and_never_a_secret(tmp_path: Path) -> None:
    config = tmp_path / "team.toml"
    config.write_text('[aws]\nlookback_days = 10\n[chat]\nslack_webhook_env = "TEAM_HOOK"\n'
                      '[email]\nsmtp_password_env = "TEAM_SMTP"\n[rules.idle]\nidle_ceiling_percent = 3\n',
                      encoding="utf-8")
    # A data home of a fixed, short name (only named, never created), so that the default history path
    # is shown whole: a temporary directory's name is longer under pytest-xdist, past the cut of a value.
    env = {"TEAM_HOOK": SECRET, "TEAM_SMTP": PASSWORD, "AWS_SECRET_ACCESS_KEY": "wJalrPLANTEDkey",
           "AWS_PROFILE": "finops", "XDG_DATA_HOME": "/nonexistent/data"}
    result = runner.invoke(app, ["config", "--config", str(config), "--region", "eu-west-1"], env=env)
    assert result.exit_code == 0, result.output
    for secret in (SECRET, PASSWORD, "wJalrPLANTEDkey", "T0SECRET", "xoxbPLANTEDsecret42", "hooks.slack.com"):
        assert secret not in result.output
    lines = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    assert result.stdout.splitlines()[0] == f"config file: {config}"
    assert lines["aws.regions"].endswith("['eu-west-1']  (flag --region)")
    assert lines["aws.lookback_days"].endswith("10  (file " + str(config) + ")")
    assert lines["aws.max_workers"].endswith("8  (default)")
    assert lines["rules.idle.idle_ceiling_percent"].endswith("3.0  (file " + str(config) + ")")
    assert lines["chat.slack_webhook_env"].endswith("'TEAM_HOOK'  (file " + str(config) + ")")
    assert lines["TEAM_HOOK"].endswith("(set, not shown)  (env)")
    assert lines["TEAM_SMTP"].endswith("(set, not shown)  (env)")
    assert lines["AWS_SECRET_ACCESS_KEY"].endswith("(set, not shown)  (env)")
    assert lines["AWS_PROFILE"].endswith("'finops'  (env)")
    # where the default puts it
    assert lines["history.path"].endswith("(unset: '/nonexistent/data/sagemaker-auditor/history.sqlite3')  (default)")


def test_a_config_named_audit_toml_is_not_read_silently(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "audit.toml").write_text('[aws]\nlookback_days = 10\n', encoding="utf-8")
    result = runner.invoke(app, ["config"])
    assert result.exit_code == 0
    assert result.stderr == ("warning: ./audit.toml is not read (the config file is ./auditor.toml, or --config "
                             "audit.toml): using the defaults\n")
    assert result.stdout.splitlines()[0] == "config file: none (no ./auditor.toml, no --config): the defaults"
    # Named as the tool reads it: read, and no warning.
    (tmp_path / "audit.toml").rename(tmp_path / "auditor.toml")
    result = runner.invoke(app, ["config"])
    assert result.stderr == "" and "10  (file auditor.toml)" in result.stdout


def test_the_config_and_history_in_use_are_named_when_not_the_defaults(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    history = tmp_path / "team-history.sqlite3"
    (tmp_path / "team.toml").write_text(f'[history]\npath = "{history}"\n', encoding="utf-8")
    result = runner.invoke(app, ["history", "--config", "team.toml"])
    assert result.stderr.splitlines()[0] == f"{CONTEXT_PREFIX}config team.toml, history {history}"
    # The defaults (./auditor.toml, the history in the data directory) are not announced.
    (tmp_path / "auditor.toml").write_text("[aws]\nlookback_days = 10\n", encoding="utf-8")
    quiet = runner.invoke(app, ["history"], env={"XDG_DATA_HOME": str(tmp_path / "data")})
    assert not [line for line in quiet.stderr.splitlines() if line.startswith(CONTEXT_PREFIX)]


class HtmlErrorPage(BaseHTTPRequestHandler):
    """A proxy's error page where the Price List API should answer."""

    def do_POST(self) -> None:
        body = (b"<!DOCTYPE html>\n<html><head><title>503 Service Temporarily Unavailable</title></head>\n"
                b"<body><center><h1>503 Service Temporarily Unavailable</h1></center><hr>nginx</body></html>\n")
        self.send_response(503)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def html_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), HtmlErrorPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_prices_update_names_an_html_error_page_by_its_status_and_title(html_server: str, tmp_path: Path) -> None:
    config = tmp_path / "auditor.toml"
    config.write_text("[aws]\nmax_attempts = 1\n", encoding="utf-8")
    env = {"AWS_ENDPOINT_URL": html_server, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
           "XDG_DATA_HOME": str(tmp_path / "data")}
    result = runner.invoke(app, ["prices", "update", "--region", "us-east-1", "--config", str(config)], env=env)
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == ["error: pricing:GetProducts in us-east-1 failed: HTTP 503 503 Service Temporarily Unavailable "
                      "(an HTML page, not an AWS answer: a proxy or the endpoint's address?)"], result.stderr
    assert "<" not in result.stderr


def test_audit_emulator_serves_the_demo_fleet_to_a_config_of_one_s_own(tmp_path: Path) -> None:
    """Started, audited with `audit run` and a small config in another process, stopped by Ctrl-C."""
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "COLUMNS": "200"}
    server = subprocess.Popen([sys.executable, "-m", "auditor.cli", "emulator"], env=env, cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        said = []
        while (line := server.stdout.readline()) and not line.startswith("  export "):
            said.append(line)
        assert line, "".join(said) + (server.stderr.read() if server.poll() is not None else "")
        exported = dict(item.split("=", 1) for item in line.split()[1:])
        assert set(exported) == {"AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                 "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"}
        config = tmp_path / "mine.toml"
        config.write_text(f'[aws]\nregions = ["us-east-1"]\n[history]\npath = "{tmp_path / "mine.sqlite3"}"\n',
                          encoding="utf-8")
        user = {k: v for k, v in os.environ.items() if k != "AWS_PROFILE"}
        audited = subprocess.run(
            [sys.executable, "-m", "auditor.cli", "run", "--config", str(config), "--format", "json"],
            env={**user, **exported, "XDG_DATA_HOME": str(tmp_path / "data"),
                 "AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")},
            cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert audited.returncode in (0, 1), audited.stderr  # 1: the demo's deleted endpoint config is an error
        report = json.loads(audited.stdout)
        assert report["summary"]["endpoints"] == len(demo_fleet()) and report["plans"]
        assert {"support-llm", "search-embeddings"} <= {e["name"] for e in report["endpoints"]}
        server.send_signal(signal.SIGINT)
        _, stderr = server.communicate(timeout=30)
        assert server.returncode == 0, stderr
        assert stderr.splitlines()[-1] == "emulator stopped" and "Traceback" not in stderr
    finally:
        if server.poll() is None:
            server.kill()
