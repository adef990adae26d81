"""Chat delivery against a real HTTP peer: a local server on 127.0.0.1 records what the auditor
posts, checks the shape each service documents (Slack incoming webhook: `text` + Block Kit
`blocks`; Teams workflow webhook: a message with an Adaptive Card attachment), and answers 500 on
demand so that the outbox and `audit send-outbox` are exercised."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import AuditConfig, ChatConfig, EmailConfig, HistoryConfig
from auditor.config_file import parse_config
from auditor.deliver.channel import Outbox
from auditor.deliver.chat import (
    OUTBOX_SUFFIX,
    ChatChannel,
    Summary,
    slack_escape,
    slack_payload,
    teams_escape,
    teams_payload,
)
from auditor.errors import ConfigError
from auditor.history.store import History
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.pipeline import AuditOutcome
from auditor.tasks.audit import deliver_outcome
from auditor.tasks.weekly import weekly_digest
from fleet_report import synthetic_report
from helpers import NOW

ADAPTIVE = "application/vnd.microsoft.card.adaptive"


@dataclass
class Webhooks:
    url: str
    posts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    failing: set[str] = field(default_factory=set)  # paths answered with 500

    def bodies(self, path: str) -> list[dict[str, Any]]:
        return [body for p, body in self.posts if p == path]


@pytest.fixture
def webhooks() -> Iterator[Webhooks]:
    state = Webhooks(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            assert self.headers.get_content_type() == "application/json"
            if self.path in state.failing:
                self.send_response(500)
                self.end_headers()
                self.wfile.write(b"server error")
                return
            state.posts.append((self.path, json.loads(raw)))
            # Slack answers 200 "ok"; a Teams workflow accepts with 202.
            self.send_response(202 if self.path.startswith("/teams") else 200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def check_slack(body: dict[str, Any]) -> None:
    """Slack incoming webhook: `text` (the notification fallback) and at most 50 blocks."""
    assert isinstance(body["text"], str) and body["text"]
    assert 1 <= len(body["blocks"]) <= 50
    for block in body["blocks"]:
        assert block["type"] in {"header", "section", "context"}
        if block["type"] == "header":
            assert block["text"]["type"] == "plain_text" and len(block["text"]["text"]) <= 150
        if block["type"] == "section":
            assert block["text"]["type"] == "mrkdwn" and len(block["text"]["text"]) <= 3000
        if block["type"] == "context":
            assert all(e["type"] == "mrkdwn" for e in block["elements"])


def check_teams(body: dict[str, Any]) -> None:
    """Teams workflow webhook: a message whose one attachment is an Adaptive Card (1.4)."""
    assert body["type"] == "message"
    (attachment,) = body["attachments"]
    assert attachment["contentType"] == ADAPTIVE
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.4"
    assert card["$schema"] == "http://adaptivecards.io/schemas/adaptive-card.json"
    for element in card["body"]:
        assert element["type"] in {"TextBlock", "FactSet"}
        if element["type"] == "FactSet":
            assert all(set(f) == {"title", "value"} for f in element["facts"])


def chat_config(**values: Any) -> ChatConfig:
    return ChatConfig(**{"slack_webhook_env": "AUDIT_SLACK", "teams_webhook_env": "AUDIT_TEAMS", **values})


@pytest.fixture
def env(webhooks: Webhooks, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIT_SLACK", f"{webhooks.url}/slack/default")
    monkeypatch.setenv("AUDIT_TEAMS", f"{webhooks.url}/teams/default")


def test_the_nightly_summary_reaches_slack_and_teams_in_their_formats(webhooks, env, tmp_path) -> None:
    report = synthetic_report(40)
    config = AuditConfig(chat=chat_config(report_url="https://reports.example.com/latest.html"),
                         email=EmailConfig(outbox_dir=str(tmp_path / "outbox")))
    delivered = deliver_outcome(config, AuditOutcome(report, ()), history=False, chat=True)
    assert delivered.problems == ()
    assert delivered.posted == ("slack:default", "teams:default")
    (slack,) = webhooks.bodies("/slack/default")
    check_slack(slack)
    # The report's headline: the findings above info, the not judged apart, as every output says it.
    assert slack["text"].startswith(f"SageMaker audit: {report.finding_count} findings "
                                    f"(+{report.not_judged_count} not judged), ${report.monthly_savings_usd:,.2f}")
    text = json.dumps(slack)
    assert f"${report.monthly_savings_usd:,.0f}/month" in text
    best = max(report.plans, key=lambda p: p.monthly_savings_usd)
    assert best.resource.name in text
    assert "<https://reports.example.com/latest.html|Full report>" in text
    (teams,) = webhooks.bodies("/teams/default")
    check_teams(teams)
    card = teams["attachments"][0]["content"]
    assert card["actions"] == [{"type": "Action.OpenUrl", "title": "Full report",
                                "url": "https://reports.example.com/latest.html"}]
    facts = {f["title"]: f["value"] for b in card["body"] if b["type"] == "FactSet" for f in b["facts"]}
    assert facts["Endpoints"] == "40"


def test_owners_get_their_endpoints_in_their_channel(webhooks, env, monkeypatch, tmp_path) -> None:
    report = synthetic_report(40)
    owner_of = {e.endpoint.name: e.endpoint.tags["owner"] for e in ENDPOINTS.section(report)}
    acting = sorted({owner_of[f.resource.name] for f in report.findings if f.severity.value != "info"})
    quiet = sorted(set(owner_of.values()) - set(acting))
    owner = acting[0]
    monkeypatch.setenv("SLACK_OWNER", f"{webhooks.url}/slack/owner")
    monkeypatch.setenv("SLACK_QUIET", f"{webhooks.url}/slack/quiet")
    routes = (f"{owner}=SLACK_OWNER", *(f"{q}=SLACK_QUIET" for q in quiet))
    config = AuditConfig(chat=chat_config(route_by_tag="owner", teams_webhook_env=None, slack_routes=routes),
                         email=EmailConfig(outbox_dir=str(tmp_path / "outbox")))
    delivered = deliver_outcome(config, AuditOutcome(report, ()), history=False, chat=True)
    assert delivered.problems == ()
    (owned,) = webhooks.bodies("/slack/owner")
    (rest,) = webhooks.bodies("/slack/default")
    assert webhooks.bodies("/slack/quiet") == []  # owners with nothing to act on get no post
    check_slack(owned)
    assert f"({owner})" in owned["text"]
    mine = {name for name, o in owner_of.items() if o == owner}
    owned_text, rest_text = json.dumps(owned), json.dumps(rest)
    assert f"*Endpoints:* {len(mine)}\\n" in owned_text
    assert any(p.resource.name in owned_text for p in report.plans if p.resource.name in mine
               and p.monthly_savings_usd > 0)
    assert not any(f'*{name}' in rest_text for name in mine)


def test_user_values_are_escaped_for_each_format() -> None:
    hostile = "<!channel> & *all*\nBcc: x {{DATE(2017-02-14T06:08:39Z, SHORT)}} [a](http://evil)"
    slack = slack_escape(hostile)
    assert "<!channel>" not in slack and "&lt;!channel&gt; &amp;" in slack and "\n" not in slack
    teams = teams_escape(hostile)
    assert "{{" not in teams and "\n" not in teams and "\\[a\\](http://evil)" in teams
    summary = Summary(title=hostile, facts=(("Owner", hostile),), heading="Top plans", lines=(), more=0,
                      link=None, pointer="Full report: run 1")
    payload = slack_payload(summary)
    # Mentions and links are parsed in mrkdwn (the fallback text, sections); a header is plain text.
    mrkdwn = [payload["text"], *(b["text"]["text"] for b in payload["blocks"] if b["type"] == "section")]
    assert not any("<!channel>" in text for text in mrkdwn)
    assert "{{DATE" not in json.dumps(teams_payload(summary))


def test_a_failed_post_waits_in_the_outbox_until_send_outbox(webhooks, env, tmp_path) -> None:
    outbox = tmp_path / "outbox"
    config_file = tmp_path / "auditor.toml"
    config_file.write_text(f'[email]\noutbox_dir = "{outbox}"\n[chat]\nslack_webhook_env = "AUDIT_SLACK"\n'
                           'teams_webhook_env = "AUDIT_TEAMS"\n', encoding="utf-8")
    from auditor.config_file import load_config

    config = load_config(config_file)
    webhooks.failing.add("/teams/default")
    report = synthetic_report(10)
    delivered = deliver_outcome(config, AuditOutcome(report, ()), history=False, chat=True)
    # Slack was posted: the Teams failure stops nothing else.
    assert delivered.posted == ("slack:default",)
    (problem,) = delivered.problems
    assert "teams webhook for default ($AUDIT_TEAMS) answered HTTP 500" in problem
    assert "audit send-outbox" in problem
    (saved,) = outbox.glob(f"*{OUTBOX_SUFFIX}")
    assert webhooks.url not in saved.read_text(encoding="utf-8")  # the secret URL is never stored
    # Still failing: left in the outbox, one line names it.
    drained = Outbox(outbox).drain(ChatChannel(config.chat))
    assert drained.sent == 0 and "HTTP 500" in drained.errors[0] and saved.exists()
    webhooks.failing.clear()
    # A chat-only setup (no [email] sender) can still run send-outbox.
    result = CliRunner().invoke(app, ["send-outbox", "--config", str(config_file)])
    assert result.exit_code == 0, result.output
    assert not saved.exists()
    (teams,) = webhooks.bodies("/teams/default")
    check_teams(teams)


def test_an_unreachable_webhook_is_one_line(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("AUDIT_SLACK", "http://127.0.0.1:9/hook")  # discard port: refused
    config = AuditConfig(chat=ChatConfig(slack_webhook_env="AUDIT_SLACK", timeout_seconds=2),
                         email=EmailConfig(outbox_dir=str(tmp_path)))
    delivered = deliver_outcome(config, AuditOutcome(synthetic_report(3), ()), history=False, chat=True)
    (problem,) = delivered.problems
    assert problem.startswith("cannot reach the slack webhook for default ($AUDIT_SLACK)") and "\n" not in problem
    assert "127.0.0.1:9" not in problem


def test_the_weekly_digest_is_posted(webhooks, env, tmp_path) -> None:
    history = tmp_path / "history.sqlite3"
    report = synthetic_report(20)
    with History(history) as store:
        store.record_run(report, fatal=False)
    config = AuditConfig(chat=chat_config(), history=HistoryConfig(path=str(history)),
                         email=EmailConfig(outbox_dir=str(tmp_path / "outbox")))
    result = weekly_digest(config, output=tmp_path / "digest.html", now=NOW, chat=True)
    assert result.status == "written" and "posted to chat" in result.message
    (slack,) = webhooks.bodies("/slack/default")
    check_slack(slack)
    assert "weekly digest 2026-W49" in slack["text"]
    check_teams(webhooks.bodies("/teams/default")[0])


@pytest.mark.parametrize(("values", "message"), [
    ({"slack_webhook_env": "https://hooks.slack.com/services/T/B/X"}, "must be the NAME of an environment variable"),
    ({"slack_routes": ["team-a=SLACK_A"]}, "need chat.route_by_tag"),
    ({"route_by_tag": "owner", "teams_routes": ["no-equals-sign"]}, "must be \"<tag value>=<ENVIRONMENT_VARIABLE>\""),
    ({"report_url": "file:///etc/passwd"}, "must be an http(s) URL"),
])
def test_chat_config_is_checked_when_read(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_config({"chat": values}, "auditor.toml")


def test_run_with_chat_checks_the_variables_before_the_audit(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("AUDIT_SLACK", raising=False)
    config_file = tmp_path / "auditor.toml"
    config_file.write_text('[chat]\nslack_webhook_env = "AUDIT_SLACK"\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["run", "--config", str(config_file), "--chat", "--no-history"])
    assert result.exit_code == 1
    assert "environment variable AUDIT_SLACK (chat.slack_webhook_env) is not set" in result.output



def test_the_empty_instance_plan_and_its_owners_post_carry_the_component_saving(
        aws, webhooks, env, monkeypatch, tmp_path) -> None:
    """support-llm (the demo's inference-component endpoint): two copies that take all four GPUs of
    an instance fill two of its three ml.g5.12xlarge; the third, hosting no copy, is the saving. The
    plan carries it, and so does its owner's post (it once read "$0/month to save"), through the CLI."""
    from auditor.catalog import HOURS_PER_MONTH, load_catalog
    from auditor_emulator.fleet import demo_fleet, seed_fleet
    from conftest import utc_now

    (llm,) = [e for e in demo_fleet() if e.name == "support-llm"]
    seed_fleet(aws, [llm], now=utc_now())
    saving = round(load_catalog().hourly_price("ml.g5.12xlarge", "us-east-1") * HOURS_PER_MONTH, 2)
    owner = llm.tags["owner"]
    monkeypatch.setenv("SLACK_OWNER", f"{webhooks.url}/slack/owner")
    config = tmp_path / "auditor.toml"
    config.write_text(f'[aws]\nregions = ["us-east-1"]\n[jobs]\nenabled = false\n'
                      f'[history]\npath = "{tmp_path / "history.sqlite3"}"\n'
                      f'[email]\noutbox_dir = "{tmp_path / "outbox"}"\n'
                      f'[chat]\nslack_webhook_env = "AUDIT_SLACK"\nroute_by_tag = "owner"\n'
                      f'slack_routes = ["{owner}=SLACK_OWNER"]\n')
    result = CliRunner().invoke(app, ["run", "--config", str(config), "--format", "json",
                                      "--output", str(tmp_path / "r.json"), "--chat"])
    assert result.exit_code == 0, result.output
    plans = json.loads((tmp_path / "r.json").read_text())["plans"]
    (plan,) = [p for p in plans if p["resource"]["name"] == "support-llm"]
    assert plan["monthly_savings_usd"] == saving and plan["measured"]
    assert "component-empty-instances" in plan["proposed"]["rules"]
    assert (plan["proposed"]["instance_type"], plan["proposed"]["instance_count"]) == ("ml.g5.12xlarge", 2)
    (owned,) = webhooks.bodies("/slack/owner")
    assert owned["text"].startswith("SageMaker audit: ") and f"${saving:,.2f}/month to save ({owner})" in owned["text"]
    # Native consolidation: managed instance scaling turned on, SageMaker moving the copies (issue 27).
    assert plan["proposed"]["action"] == "managed-scaling"
    assert (f"support-llm / AllTraffic*: 2 x ml.g5.12xlarge: managed instance scaling on, 2-3 instances, scale-in "
            f"CONSOLIDATION (${saving:,.0f}/month)") in json.dumps(owned)
