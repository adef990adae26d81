"""Chat delivery: a compact summary of a run or of the weekly digest, posted to a Slack incoming
webhook (`{"text", "blocks"}`, mrkdwn sections) and to a Microsoft Teams workflow webhook (an
Adaptive Card 1.4 in a message attachment).

Webhook URLs are secrets: the config names the environment variables that hold them, and the URL
is never written to a message, a log or the outbox. A post that fails is saved in the outbox (beside
the unsent mail, as `*.chat.json`, with the variable's name and the payload: ChatChannel) and
`audit send-outbox` posts it again.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import ssl
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from auditor.deliver.audience import AudienceOf, delivered_partition, has_something_to_act_on, partition
from auditor.deliver.channel import Outbox, Unsent
from auditor.errors import AuditorError, ConfigError
from auditor.models import AuditReport
from auditor.report.headline import report_headline
from auditor.text import clipped, one_line

if TYPE_CHECKING:
    from auditor.config import ChatConfig
    from auditor.history.weekly import Digest

SERVICES = ("slack", "teams")
OUTBOX_SUFFIX = ".chat.json"
MAX_VALUE_CHARS = 80  # a tag or name longer than this is cut in a post
SLACK_SECTION_CHARS = 2900  # Slack refuses a section text over 3000 characters


class ChatError(AuditorError):
    """A post that could not be delivered (one line, never the webhook URL)."""


# --- configuration --------------------------------------------------------------------------------


def chat_configured(chat: ChatConfig) -> bool:
    return bool(chat.slack_webhook_env or chat.teams_webhook_env or chat.slack_routes or chat.teams_routes)


def check_chat_config(chat: ChatConfig, environ: Mapping[str, str] | None = None) -> None:
    """Before a run that posts (`--chat`): a webhook is configured and every variable it names is set."""
    environ = os.environ if environ is None else environ
    if not chat_configured(chat):
        raise ConfigError("--chat needs chat.slack_webhook_env, chat.teams_webhook_env or chat routes in the config")
    for env, key in _all_envs(chat):
        if not environ.get(env):
            raise ConfigError(f"environment variable {env} ({key}) is not set")


def _all_envs(chat: ChatConfig) -> list[tuple[str, str]]:
    envs = [(getattr(chat, f"{s}_webhook_env"), f"chat.{s}_webhook_env") for s in SERVICES
            if getattr(chat, f"{s}_webhook_env")]
    for service in SERVICES:
        routes = chat.routes(service)
        envs += [(env, f"chat.{service}_routes") for env in routes.values()]
    return envs


# --- what a post says, before any format ----------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One plan, or one finding of the digest."""

    resource: str  # how reports name it (ResourceRef.label): an endpoint's name, "training job nightly"
    variant: str | None
    advice: str
    monthly_savings_usd: float


@dataclass(frozen=True)
class Summary:
    title: str
    facts: tuple[tuple[str, str], ...]
    heading: str  # over the lines, e.g. "Top plans"
    lines: tuple[Line, ...]
    more: int  # lines not shown
    link: str | None  # the full report
    pointer: str  # where the full report is, when there is no link
    banner: str | None = None  # a partial run


def _money(value: float) -> str:
    return f"${value:,.0f}/month"


def report_summary(report: AuditReport, chat: ChatConfig, pointer: str, owner: str | None = None) -> Summary:
    counts = report.findings_by_severity()
    plans = sorted((p for p in report.plans if p.monthly_savings_usd > 0), key=lambda p: -p.monthly_savings_usd)
    lines = tuple(Line(p.resource.label, p.variant, p.proposed.advice, p.monthly_savings_usd)
                  for p in plans[:chat.top_plans])
    # The report's headline, as the mail's subject and every output open with.
    title = report_headline(report)
    if owner:
        title += f" ({owner})"
    facts = (
        ("Endpoints", str(len(report.sections.get("endpoints", ())))),  # the endpoints kind's section, by its key
        ("Monthly spend", f"${report.monthly_cost_usd:,.0f}"),
        ("Potential saving", _money(report.monthly_savings_usd)),
        ("Findings", ", ".join(f"{n} {s}" for s, n in counts.items() if n and s != "info") or "none"),
        ("Not judged", str(report.not_judged_count)),
        ("Errors", str(len(report.errors))),
        ("Window", f"{report.window.start:%Y-%m-%d} to {report.window.end:%Y-%m-%d}"),
    )
    return Summary(title, facts, "Top plans", lines, max(len(plans) - len(lines), 0), chat.report_url, pointer,
                   banner=f"Partial run: {report.partial}" if report.partial else None)


def digest_summary(digest: Digest, chat: ChatConfig, pointer: str) -> Summary:
    open_ = sorted((*digest.new, *digest.still_open), key=lambda o: -o.finding.monthly_savings_usd)
    shown = [o for o in open_ if o.finding.monthly_savings_usd > 0][:chat.top_plans]
    lines = tuple(Line(o.finding.endpoint, o.finding.variant, o.finding.advice or o.finding.rule,
                       o.finding.monthly_savings_usd) for o in shown)
    run = digest.run
    facts = (
        ("New findings", str(len(digest.new))),
        ("Resolved", f"{len(digest.resolved)} ({_money(digest.realised_monthly_usd)} realised)"),
        ("Still open", str(len(digest.still_open))),
        ("Monthly spend", f"${run.monthly_cost_usd:,.0f}"),
        ("Potential saving", _money(run.monthly_savings_usd)),
    )
    return Summary(f"SageMaker audit: weekly digest {digest.week}", facts, "Largest open findings", lines,
                   max(len([o for o in open_ if o.finding.monthly_savings_usd > 0]) - len(lines), 0),
                   chat.report_url, pointer)


# --- the two formats ------------------------------------------------------------------------------

def _plain(value: str, limit: int = MAX_VALUE_CHARS) -> str:
    """User values on one line (no control character can start a line of its own), cut to `limit`."""
    return clipped(one_line(value).strip(), limit)


def slack_escape(value: str, limit: int = MAX_VALUE_CHARS) -> str:
    """Slack reads &, < and > as markup (`<!channel>` pings everyone, `<url|text>` links); the mrkdwn
    objects are `verbatim`, so a bare URL, `#channel` or `@here` in a value is not linked or parsed.
    Slack has no escape for `*`, `_`, `~`, backticks or `:emoji:` codes: such a value may show formatted."""
    return _plain(value, limit).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text, "verbatim": True}


# What an Adaptive Card TextBlock's Markdown reads (Microsoft documents bold, italic, bullet and numbered
# lists and links, CommonMark-style): a backslash before punctuation, `*`, `_` at a word's edge (`a_b` is
# no emphasis), the brackets of a link and the `<` of an autolink (`<http://x>`). Nothing else is
# escaped: some Teams clients show a backslash they do not need literally (`2026\-11\-16`).
_TEAMS_INLINE = re.compile(r"\\(?=[!-/:-@\[-`{-~])|\*|(?<![^\W_])_|_(?![^\W_])|[\[\]<]")
# A bullet or a numbered item where a value opens a TextBlock's line.
_TEAMS_LIST_START = re.compile(r"^(?:[-+]|\d{1,9}[.)])(?=\s|$)")


def teams_escape(value: str, limit: int = MAX_VALUE_CHARS) -> str:
    """A value shown literally in a TextBlock or a fact: the Markdown it would read backslashed, and the
    braces of `{{DATE(...)}}` functions broken up."""
    text = _TEAMS_INLINE.sub(r"\\\g<0>", _plain(value, limit))
    start = _TEAMS_LIST_START.match(text)
    if start:
        text = text[: start.end() - 1] + "\\" + text[start.end() - 1:]
    return text.replace("{{", "{\u200b{").replace("}}", "}\u200b}")


def _where(line: Line, escape: Any) -> str:
    return escape(line.resource) + (f" / {escape(line.variant)}" if line.variant else "")


def slack_payload(summary: Summary) -> dict[str, Any]:
    facts = "\n".join(f"*{label}:* {slack_escape(value)}" for label, value in summary.facts)
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _plain(summary.title, 150), "emoji": False}},
    ]
    if summary.banner:
        banner = f":warning: {slack_escape(summary.banner, 300)}"
        blocks.append({"type": "section", "text": _mrkdwn(banner)})
    blocks.append({"type": "section", "text": _mrkdwn(facts)})
    if summary.lines:
        rows = [f"• *{_where(line, slack_escape)}*: {slack_escape(line.advice, 200)} "
                f"({_money(line.monthly_savings_usd)})" for line in summary.lines]
        # Whole rows only: a cut would leave half an entity (`&am`) or an unclosed `*`.
        shown = len(rows)
        while shown and len("\n".join(rows[:shown])) > SLACK_SECTION_CHARS - len(summary.heading) - 40:
            shown -= 1
        more = summary.more + len(rows) - shown
        text = f"*{summary.heading}*\n" + "\n".join(rows[:shown] + ([f"…and {more} more"] if more else []))
        blocks.append({"type": "section", "text": _mrkdwn(text)})
    link = (f"<{slack_escape(summary.link, 2000)}|Full report>" if summary.link
            else slack_escape(summary.pointer, 300))
    blocks.append({"type": "context", "elements": [_mrkdwn(link)]})
    # The top-level text (the notification's fallback) is read as mrkdwn; the header is plain text.
    return {"text": slack_escape(summary.title, 150), "blocks": blocks}


def teams_payload(summary: Summary) -> dict[str, Any]:
    body: list[dict[str, Any]] = [
        {"type": "TextBlock", "text": teams_escape(summary.title, 150), "size": "Medium", "weight": "Bolder",
         "wrap": True},
    ]
    if summary.banner:
        body.append({"type": "TextBlock", "text": teams_escape(summary.banner, 300), "color": "Warning",
                     "wrap": True})
    body.append({"type": "FactSet", "facts": [{"title": teams_escape(label), "value": teams_escape(value)}
                                              for label, value in summary.facts]})
    if summary.lines:
        body.append({"type": "TextBlock", "text": teams_escape(summary.heading), "weight": "Bolder",
                     "spacing": "Medium", "wrap": True})
        body.extend({"type": "TextBlock", "wrap": True, "spacing": "Small",
                     "text": f"{_where(line, teams_escape)}: {teams_escape(line.advice, 200)} "
                             f"({teams_escape(_money(line.monthly_savings_usd))})"}
                    for line in summary.lines)
        if summary.more:
            body.append({"type": "TextBlock", "text": f"…and {summary.more} more", "isSubtle": True, "wrap": True})
    card: dict[str, Any] = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": body,
    }
    if summary.link:
        card["actions"] = [{"type": "Action.OpenUrl", "title": "Full report", "url": summary.link}]
    else:
        body.append({"type": "TextBlock", "text": teams_escape(summary.pointer, 300), "isSubtle": True, "wrap": True})
    return {"type": "message", "attachments": [
        {"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": None, "content": card}]}


PAYLOADS = {"slack": slack_payload, "teams": teams_payload}


# --- posts: who gets what --------------------------------------------------------------------------


@dataclass(frozen=True)
class ChatPost:
    service: str  # slack | teams
    webhook_env: str  # the variable that holds the URL (the URL itself is never stored)
    label: str  # "default" or the owner's tag value, for messages
    payload: dict[str, Any]


def split_by_tag(report: AuditReport, tag: str, owners: set[str]) -> dict[str | None, AuditReport]:
    """One report per routed tag value; None: the rest, with the region-wide errors. A partition of
    every resource, finding, plan and error: see deliver.audience."""
    return partition(report, routed_owner(tag, owners))


def routed_owner(tag: str, owners: set[str]) -> AudienceOf:
    """The audience of a resource for chat: its `tag` value, when that value has a route."""
    def audience(tags: Mapping[str, str]) -> str | None:
        value = _plain(tags.get(tag, ""), 256)
        return value if value in owners else None
    return audience


def plan_report_posts(report: AuditReport, chat: ChatConfig, pointer: str) -> list[ChatPost]:
    """The default channels get the run (with owner routing: what no routed owner gets); each
    routed owner with a finding above info or an error gets only theirs (the rest of their
    resources, with nothing to act on, are in the default channel's post)."""
    posts: list[ChatPost] = []
    for service in SERVICES:
        default_env: str | None = getattr(chat, f"{service}_webhook_env")
        routes = chat.routes(service)
        parts = (delivered_partition(report, routed_owner(chat.route_by_tag, set(routes)), has_something_to_act_on)
                 if chat.route_by_tag and routes else {None: report})
        for owner, part in parts.items():
            env = routes[owner] if owner is not None else default_env
            if env is None:
                continue
            summary = report_summary(part, chat, pointer, owner=_plain(owner) if owner else None)
            posts.append(ChatPost(service, env, owner or "default", PAYLOADS[service](summary)))
    return posts


def plan_digest_posts(digest: Digest, chat: ChatConfig, pointer: str) -> list[ChatPost]:
    """The digest goes to the default channels (its findings carry no tags to route by)."""
    summary = digest_summary(digest, chat, pointer)
    return [ChatPost(service, env, "default", PAYLOADS[service](summary))
            for service in SERVICES if (env := getattr(chat, f"{service}_webhook_env"))]


# --- sending, and the outbox -----------------------------------------------------------------------


def post(item: ChatPost, timeout: float, environ: Mapping[str, str] | None = None) -> None:
    """One post. Every failure is a ChatError that names the variable and never quotes the URL or a
    piece of it (urllib and http.client put the host or the path in their messages)."""
    environ = os.environ if environ is None else environ
    # A trailing newline (a value read from a file) is not part of the URL.
    url = environ.get(item.webhook_env, "").strip()
    what = f"{item.service} webhook for {item.label} (${item.webhook_env})"
    if not url:
        raise ChatError(f"cannot post to the {what}: the environment variable is not set")
    if not url.startswith(("https://", "http://")):
        raise ChatError(f"cannot post to the {what}: the variable does not hold an http(s) URL")
    if any(c.isspace() or not c.isprintable() for c in url):
        raise ChatError(f"cannot post to the {what}: the variable's URL holds a space, a line break or a "
                        "control character")
    try:
        request = urllib.request.Request(url, data=json.dumps(item.payload).encode("utf-8"), method="POST",
                                         headers={"Content-Type": "application/json; charset=utf-8",
                                                  "User-Agent": "sagemaker-auditor"})
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # http(s) only: checked above
            answer.read(4096)
    except urllib.error.HTTPError as exc:
        raise ChatError(f"the {what} answered HTTP {exc.code} {_plain(str(exc.reason), 60)}") from None
    except urllib.error.URLError as exc:
        raise ChatError(f"cannot reach the {what}: {_network_reason(exc.reason)}") from None
    except (OSError, http.client.HTTPException) as exc:
        raise ChatError(f"cannot reach the {what}: {_network_reason(exc)}") from None
    except ValueError:  # http.client.InvalidURL and urllib's own: their message quotes the URL
        raise ChatError(f"cannot post to the {what}: the variable does not hold a valid URL") from None


def _network_reason(reason: object) -> str:
    """Why a connection failed, in words that hold no host name or path: the OS's text for the
    error number, TLS's short reason code, or the kind of failure."""
    if isinstance(reason, TimeoutError):
        return "timed out"
    if isinstance(reason, ssl.SSLError):
        return f"TLS error {reason.reason or type(reason).__name__}"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return type(reason).__name__ if isinstance(reason, BaseException) else "the URL cannot be used"


@dataclass(frozen=True)
class ChatChannel:
    """Slack and Teams incoming webhooks: one channel, as their posts share the way they are sent
    (JSON over HTTPS to the URL in the post's variable) and their outbox file (`*.chat.json`: the
    service, the variable's NAME, the label and the payload; never the URL)."""

    chat: ChatConfig
    name: ClassVar[str] = "chat"
    noun: ClassVar[str] = "chat post"
    outbox_suffix: ClassVar[str] = OUTBOX_SUFFIX
    transient_errors: ClassVar[tuple[type[AuditorError], ...]] = (ChatError,)

    @property
    def configured(self) -> bool:
        return chat_configured(self.chat)

    def check(self) -> None:
        """Nothing before a drain: a post whose variable is not set fails alone, with its line, and
        waits (check_chat_config guards `--chat` before an audit)."""

    def send(self, message: ChatPost) -> None:
        post(message, self.chat.timeout_seconds)

    def dump(self, message: ChatPost) -> bytes:
        return json.dumps({"service": message.service, "webhook_env": message.webhook_env,
                           "label": message.label, "payload": message.payload}).encode("utf-8")

    def load(self, data: bytes) -> ChatPost:
        saved = json.loads(data.decode("utf-8"))
        try:
            return ChatPost(str(saved["service"]), str(saved["webhook_env"]), str(saved.get("label", "default")),
                            dict(saved["payload"]))
        except (KeyError, TypeError) as exc:
            raise ValueError(str(exc)) from None

    def unsent_line(self, unsent: Unsent[ChatPost]) -> str:
        if isinstance(unsent.kept, OSError):
            return (f"{unsent.error}; and it could not be saved in {unsent.outbox}: "
                    f"{unsent.kept.strerror or unsent.kept}")
        return f"{unsent.error}; saved in {unsent.kept.parent} (retry: audit send-outbox)"

    def drained_line(self, sent: int) -> str:
        return f"posted {sent} chat message{'s' if sent != 1 else ''}"


def deliver_posts(posts: list[ChatPost], chat: ChatConfig, outbox: Outbox) -> tuple[list[str], list[str]]:
    """Post each; one that fails goes to the outbox. Returns (what was posted, one line per failure)."""
    channel = ChatChannel(chat)
    posted, unsent = outbox.send_or_keep(channel, posts)
    return [f"{item.service}:{item.label}" for item in posted], [channel.unsent_line(u) for u in unsent]
