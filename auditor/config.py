"""The TOML configuration, validated at start-up with errors that name the key."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from auditor.errors import ConfigError

DEFAULT_CONFIG_PATH = Path("auditor.toml")

# CloudWatch keeps 1-hour data for 455 days; nothing older can be asked for.
MAX_LOOKBACK_DAYS = 455
SIZING_STATISTICS = ("avg", "p50", "p90", "p95", "p99", "max")
DEFAULT_MIN_DAYS = 7


ALL_REGIONS = "all"
ACCOUNT_ID_PLACEHOLDER = "{account_id}"


@dataclass(frozen=True)
class AwsConfig:
    regions: tuple[str, ...] = ("us-east-1",)  # or ("all",): every region enabled for the account
    profile: str | None = None
    # Several accounts: these ids, or every ACTIVE account of the organisation; entered by AssumeRole.
    accounts: tuple[str, ...] = ()
    organization: bool = False
    exclude_accounts: tuple[str, ...] = ()
    role_name: str | None = None  # the role to assume in each account, e.g. "SageMakerAuditorReadOnly"
    role_arn_template: str | None = None  # or a full ARN with {account_id}
    external_id: str | None = None
    lookback_days: int = 14
    period_seconds: int = 3600
    max_workers: int = 8
    # A scheduled job must not hang on a dead endpoint: short timeouts, few attempts, a deadline.
    connect_timeout_seconds: float = 5.0
    read_timeout_seconds: float = 30.0
    max_attempts: int = 5  # per call, the first included (throttling and 5xx are retried with backoff)
    deadline_minutes: float = 0.0  # the whole run; 0: automatic, 30 minutes + 0.6 s per endpoint


@dataclass(frozen=True)
class ThresholdsConfig:
    """A resource is under-used when its sizing statistic stays below its threshold (percent)."""

    cpu: float = 50.0
    memory: float = 50.0
    gpu: float = 50.0
    gpu_memory: float = 50.0
    sizing_statistic: str = "p95"


@dataclass(frozen=True)
class RecommendConfig:
    target_utilization: float = 70.0
    min_instances: int | None = None  # None: never fewer than min(current, 2)
    min_days: int = DEFAULT_MIN_DAYS  # unset: also at most the lookback
    peak_statistic: str = "max"
    allow_architecture_change: bool = False
    allow_burstable: bool = False
    min_savings_percent: float = 10.0


@dataclass(frozen=True)
class PricingConfig:
    # Use this region's list prices where the catalog has none for the endpoint's region.
    assume_prices_from: str | None = None
    api_region: str = "us-east-1"  # where the Price List API is called (us-east-1, eu-central-1, ap-south-1)
    refresh_after_days: int = 7  # `audit run` refreshes a price cache this old; 0: never by itself
    fetch_when_missing: bool = False  # true: `audit run` fetches prices when there is no cache yet
    cache_path: str = ""  # default: prices/sagemaker-prices.json in the user's data directory
    max_price_age_days: int = 365  # older prices get a warning line in every report; 0: none
    basis: str = "list"  # list | effective (the account's own rates, from Cost Explorer)
    # AWS's SageMaker Savings Plans recommendation (ce:GetSavingsPlansPurchaseRecommendation)
    savings_plans: bool = False
    savings_plan_terms: tuple[str, ...] = ("ONE_YEAR", "THREE_YEARS")
    savings_plan_payment: str = "NO_UPFRONT"  # NO_UPFRONT | PARTIAL_UPFRONT | ALL_UPFRONT
    savings_plan_lookback: str = "THIRTY_DAYS"  # SEVEN_DAYS | THIRTY_DAYS | SIXTY_DAYS


@dataclass(frozen=True)
class SkipConfig:
    # Endpoint name patterns (fnmatch, e.g. "dev-*") never audited.
    endpoints: tuple[str, ...] = ()


class RulesConfig:
    """The settings of every rule, by rule id: `[rules.<id>]` tables over each rule's defaults.
    The rules and their settings classes are defined in auditor/analyse/rules/, one module each."""

    def __init__(self, values: dict[str, Any] | None = None) -> None:
        self._values = dict(values or {})

    def of(self, rule_id: str) -> Any:
        """The settings of a rule (an instance of its own settings class)."""
        if rule_id not in self._values:
            self._values[rule_id] = _rule(rule_id).settings()
        return self._values[rule_id]

    def replaced(self, rule_id: str, settings: Any) -> RulesConfig:
        return RulesConfig({**self._values, rule_id: settings})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RulesConfig) and all(
            self.of(r.id) == other.of(r.id) for r in _configurable_rules()
        )

    def __hash__(self) -> int:
        return hash(tuple(self.of(r.id) for r in _configurable_rules()))

    def __repr__(self) -> str:
        return f"RulesConfig({self._values!r})"


def _configurable_rules() -> tuple[Any, ...]:
    # The registry imports this module (rules read AuditConfig): look it up when first needed.
    from auditor.analyse.rules import configurable_rules

    return configurable_rules()


def _rule(rule_id: str) -> Any:
    from auditor.analyse.rules import BY_ID

    rule = BY_ID.get(rule_id)
    if rule is None or not rule.configurable:
        raise KeyError(f"no configurable rule {rule_id!r}")
    return rule


@dataclass(frozen=True)
class EmailConfig:
    sender: str | None = None
    recipients: tuple[str, ...] = ()
    transport: str = "smtp"
    smtp_host: str = "localhost"
    smtp_port: int = 25
    smtp_starttls: bool = False
    smtp_ssl: bool = False
    smtp_username: str | None = None
    smtp_password_env: str | None = None
    # Log in over a connection with neither STARTTLS nor SSL (the password travels in clear).
    smtp_allow_plain_login: bool = False
    ses_region: str | None = None
    subject_prefix: str = "SageMaker audit"
    # Send each owner only their endpoints: the tag that holds the owner's email address.
    route_by_tag: str | None = None
    # Where unsent messages wait for `audit send-outbox`; default: the user's data directory.
    outbox_dir: str | None = None
    # With route_by_tag: mail an owner whose endpoints have no finding above info too.
    send_empty_owner_reports: bool = False


@dataclass(frozen=True)
class ChatConfig:
    """Slack and Teams summaries (auditor/deliver/chat.py). Webhook URLs are secrets: the config
    names the environment variables that hold them, never the URLs."""

    slack_webhook_env: str | None = None  # NAME of the variable holding a Slack incoming webhook URL
    teams_webhook_env: str | None = None  # NAME of the variable holding a Teams workflow webhook URL
    route_by_tag: str | None = None  # e.g. "owner": endpoints whose tag value has a route go there
    slack_routes: tuple[str, ...] = ()  # "<tag value>=<ENV NAME>", e.g. "ml-search=SLACK_ML_SEARCH"
    teams_routes: tuple[str, ...] = ()
    report_url: str | None = None  # a link to the full report in every post
    top_plans: int = 5  # plans listed in a post, largest saving first
    timeout_seconds: float = 10.0
    nightly: bool = True  # the nightly job posts when a webhook is configured
    weekly: bool = True  # the weekly digest job posts when a webhook is configured


@dataclass(frozen=True)
class JobsConfig:
    enabled: bool = True  # audit training and batch transform jobs too
    spot_discount_percent: float = 70.0  # the Spot saving assumed for on-demand training
    min_savings_usd: float = 1.0  # smaller Spot savings per run are not reported
    experiment_prefixes: tuple[str, ...] = ()  # job name prefixes that make an experiment
    transform_min_hours: float = 1.0  # a recurring transform job this long is judged
    transform_min_runs: int = 3  # runs of one name pattern in the window that make it recurring


@dataclass(frozen=True)
class WorkspacesConfig:
    notebooks: bool = True  # audit notebook instances
    studio: bool = True  # audit Studio domains, spaces and apps


@dataclass(frozen=True)
class HyperPodConfig:
    enabled: bool = True  # audit SageMaker HyperPod clusters


@dataclass(frozen=True)
class HistoryConfig:
    path: str | None = None  # default: history.sqlite3 in the user's data directory


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass(frozen=True)
class ScheduleConfig:
    nightly_at: str = "02:00"
    weekly_day: str = "monday"
    weekly_at: str = "07:00"
    timezone: str = "UTC"


@dataclass(frozen=True)
class AuditConfig:
    aws: AwsConfig = field(default_factory=AwsConfig)
    thresholds: ThresholdsConfig = field(default_factory=ThresholdsConfig)
    recommend: RecommendConfig = field(default_factory=RecommendConfig)
    pricing: PricingConfig = field(default_factory=PricingConfig)
    email: EmailConfig = field(default_factory=EmailConfig)
    chat: ChatConfig = field(default_factory=ChatConfig)
    skip: SkipConfig = field(default_factory=SkipConfig)
    rules: RulesConfig = field(default_factory=RulesConfig)
    jobs: JobsConfig = field(default_factory=JobsConfig)
    workspaces: WorkspacesConfig = field(default_factory=WorkspacesConfig)
    hyperpod: HyperPodConfig = field(default_factory=HyperPodConfig)
    history: HistoryConfig = field(default_factory=HistoryConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    source: str = "defaults"
    # The keys the file set ("recommend.min_days"), and the keys a command-line flag set, with the flag.
    explicit: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    flags: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)

    def origin(self, key: str) -> str:
        """Where a value came from, for an error: the flag if one set it, else the key."""
        return dict(self.flags).get(key, key)

    def role_arn(self, account_id: str) -> str:
        """The role to assume in `account_id` ([aws] role_arn_template, else role_name)."""
        if self.aws.role_arn_template:
            return self.aws.role_arn_template.replace(ACCOUNT_ID_PLACEHOLDER, account_id)
        return f"arn:aws:iam::{account_id}:role/{self.aws.role_name}"

    def with_overrides(
        self, regions: list[str] | None = None, lookback_days: int | None = None
    ) -> AuditConfig:
        aws = self.aws
        flags = dict(self.flags)
        if regions:
            aws = replace(aws, regions=tuple(regions))
            flags["aws.regions"] = "--region"
        if lookback_days is not None:
            aws = replace(aws, lookback_days=lookback_days)
            flags["aws.lookback_days"] = "--lookback-days"
        config = _default_min_days(replace(self, aws=aws, flags=tuple(flags.items())))
        _validate(config)
        return config


def _default_min_days(config: AuditConfig) -> AuditConfig:
    """recommend.min_days left unset is the default capped at the lookback: a 3-day audit needs 3 days."""
    if "recommend.min_days" in config.explicit:
        return config
    days = min(DEFAULT_MIN_DAYS, max(config.aws.lookback_days, 1))
    return replace(config, recommend=replace(config.recommend, min_days=days))


_SECTIONS: dict[str, type] = {
    "aws": AwsConfig,
    "thresholds": ThresholdsConfig,
    "recommend": RecommendConfig,
    "pricing": PricingConfig,
    "email": EmailConfig,
    "chat": ChatConfig,
    "skip": SkipConfig,
    "jobs": JobsConfig,
    "workspaces": WorkspacesConfig,
    "hyperpod": HyperPodConfig,
    "history": HistoryConfig,
    "schedule": ScheduleConfig,
}


def load_config(path: Path | None) -> AuditConfig:
    """Read `path`, else ./auditor.toml if present, else the defaults."""
    if path is None:
        if not DEFAULT_CONFIG_PATH.exists():
            return AuditConfig()
        path = DEFAULT_CONFIG_PATH
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    return parse_config(raw, source=str(path))


def parse_config(raw: dict[str, Any], source: str = "<config>") -> AuditConfig:
    sections: dict[str, Any] = {}
    explicit: set[str] = set()
    for section_name, value in raw.items():
        if section_name == "rules":
            sections["rules"] = _parse_rules(value, source)
            continue
        if section_name not in _SECTIONS:
            raise ConfigError(
                f"{source}: unknown section [{section_name}] (known: {', '.join(_SECTIONS)})"
            )
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: [{section_name}] must be a table")
        sections[section_name] = _parse_section(section_name, _SECTIONS[section_name], value, source)
        explicit.update(f"{section_name}.{key}" for key in value)
    config = _default_min_days(AuditConfig(**sections, source=source, explicit=frozenset(explicit)))
    _validate(config)
    return config


def _parse_rules(raw: Any, source: str) -> RulesConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: [rules] must be a table of [rules.<rule-id>] tables")
    known = {r.id: r for r in _configurable_rules()}
    rules: dict[str, Any] = {}
    for rule_id, values in raw.items():
        if rule_id not in known:
            raise ConfigError(f"{source}: unknown rule [rules.{rule_id}] (known: {', '.join(sorted(known))})")
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: [rules.{rule_id}] must be a table")
        rules[rule_id] = _parse_section(f"rules.{rule_id}", known[rule_id].settings, values, source)
    return RulesConfig(rules)


def _parse_section(name: str, cls: type, values: dict[str, Any], source: str) -> Any:
    known = {f.name: f for f in fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(
                f"{source}: unknown key {name}.{key} (known: {', '.join(sorted(known))})"
            )
        default = getattr(cls(), key)
        kwargs[key] = _coerce(f"{name}.{key}", value, default, source)
    return cls(**kwargs)


def _coerce(key: str, value: Any, default: Any, source: str) -> Any:
    """Check a value against the type of its default; ints are accepted where floats are."""
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{source}: {key} must be true or false, got {value!r}")
        return value
    if isinstance(default, tuple):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError(f"{source}: {key} must be a list of strings, got {value!r}")
        return tuple(value)
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{source}: {key} must be a number, got {value!r}")
        return float(value)
    if isinstance(default, int) or key == "recommend.min_instances":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{source}: {key} must be a whole number, got {value!r}")
        return value
    if not isinstance(value, str):
        raise ConfigError(f"{source}: {key} must be a string, got {value!r}")
    return value


def _validate(config: AuditConfig) -> None:
    src = config.source
    from auditor.deliver.chat import validate_chat_config

    validate_chat_config(config.chat, src)
    aws = config.aws
    if not aws.regions:
        raise ConfigError(f"{src}: aws.regions must name at least one region")
    if ALL_REGIONS in aws.regions and len(aws.regions) > 1:
        raise ConfigError(f'{src}: aws.regions is either "all" or a list of regions, got {list(aws.regions)}')
    for key in ("accounts", "exclude_accounts"):
        bad = [a for a in getattr(aws, key) if not (len(a) == 12 and a.isdigit())]
        if bad:
            raise ConfigError(f"{src}: aws.{key} must hold 12-digit account ids, got {bad[0]!r}")
    if (aws.accounts or aws.organization) and not (aws.role_name or aws.role_arn_template):
        raise ConfigError(f"{src}: aws.role_name or aws.role_arn_template is required with aws.accounts "
                          "or aws.organization (the role to assume in each account)")
    if aws.role_arn_template and ACCOUNT_ID_PLACEHOLDER not in aws.role_arn_template:
        raise ConfigError(f"{src}: aws.role_arn_template must contain {ACCOUNT_ID_PLACEHOLDER}, "
                          f"got {aws.role_arn_template!r}")
    lookback_flag = config.origin("aws.lookback_days")
    # "--lookback-days 5" when the flag set it, else "aws.lookback_days = 5" (the file's or the default).
    from_flag = lookback_flag != "aws.lookback_days"
    lookback = f"{lookback_flag} {aws.lookback_days}" if from_flag else f"aws.lookback_days = {aws.lookback_days}"
    if not 1 <= aws.lookback_days <= MAX_LOOKBACK_DAYS:
        where = f"{lookback_flag} (aws.lookback_days)" if from_flag else f"{src}: aws.lookback_days"
        raise ConfigError(
            f"{where} must be from 1 to {MAX_LOOKBACK_DAYS} "
            f"(CloudWatch retention), got {aws.lookback_days}"
        )
    if aws.period_seconds < 60 or aws.period_seconds % 60:
        raise ConfigError(
            f"{src}: aws.period_seconds must be a positive multiple of 60, got {aws.period_seconds}"
        )
    if aws.period_seconds > 86400:
        raise ConfigError(f"{src}: aws.period_seconds must be at most 86400, got {aws.period_seconds}")
    if not 1 <= aws.max_workers <= 64:
        raise ConfigError(f"{src}: aws.max_workers must be from 1 to 64, got {aws.max_workers}")
    for key, low, high in (("connect_timeout_seconds", 0.1, 300), ("read_timeout_seconds", 0.1, 900)):
        value = getattr(aws, key)
        if not low <= value <= high:
            raise ConfigError(f"{src}: aws.{key} must be from {low:g} to {high:g} seconds, got {value:g}")
    if not 1 <= aws.max_attempts <= 20:
        raise ConfigError(f"{src}: aws.max_attempts must be from 1 to 20, got {aws.max_attempts}")
    if not 0 <= aws.deadline_minutes <= 24 * 60:
        raise ConfigError(
            f"{src}: aws.deadline_minutes must be from 0 (automatic) to 1440, got {aws.deadline_minutes:g}")
    thresholds = config.thresholds
    for key in ("cpu", "memory", "gpu", "gpu_memory"):
        value = getattr(thresholds, key)
        if not 0 < value <= 100:
            raise ConfigError(f"{src}: thresholds.{key} must be a percent above 0 and at most 100, got {value}")
    if thresholds.sizing_statistic not in SIZING_STATISTICS:
        raise ConfigError(
            f"{src}: thresholds.sizing_statistic must be one of {', '.join(SIZING_STATISTICS)}, "
            f"got {thresholds.sizing_statistic!r}"
        )
    rec = config.recommend
    if not 1 <= rec.target_utilization <= 100:
        raise ConfigError(
            f"{src}: recommend.target_utilization must be a percent from 1 to 100, got {rec.target_utilization}"
        )
    if rec.min_instances is not None and rec.min_instances < 1:
        raise ConfigError(f"{src}: recommend.min_instances must be at least 1, got {rec.min_instances}")
    if rec.min_days < 1:
        raise ConfigError(f"{src}: recommend.min_days must be at least 1, got {rec.min_days}")
    if rec.min_days > aws.lookback_days:
        raise ConfigError(
            f"{src}: recommend.min_days ({rec.min_days}) must be at most the lookback ({lookback})"
        )
    if rec.peak_statistic not in SIZING_STATISTICS:
        raise ConfigError(
            f"{src}: recommend.peak_statistic must be one of {', '.join(SIZING_STATISTICS)}, "
            f"got {rec.peak_statistic!r}"
        )
    if not 0 <= rec.min_savings_percent < 100:
        raise ConfigError(
            f"{src}: recommend.min_savings_percent must be from 0 to below 100, got {rec.min_savings_percent}"
        )
    for rule_meta in _configurable_rules():
        rule = config.rules.of(rule_meta.id)
        name = f"rules.{rule_meta.id}"
        for key in ("min_rise_percent", "target_utilization", "min_savings_percent"):
            value = getattr(rule, key, None)
            if value is not None and not 0 <= value <= 1000:
                raise ConfigError(f"{src}: {name}.{key} must be a percent from 0, got {value}")
        p_value = getattr(rule, "p_value", None)
        if p_value is not None and not 0 < p_value < 1:
            raise ConfigError(f"{src}: {name}.p_value must be between 0 and 1, got {p_value}")
        rule_days = getattr(rule, "lookback_days", 0)
        if rule_days < 0:
            raise ConfigError(f"{src}: {name}.lookback_days must be from 0 (the whole window), got {rule_days}")
        if rule_days > aws.lookback_days:
            raise ConfigError(
                f"{src}: {name}.lookback_days ({rule_days}) must be at most the lookback ({lookback})"
            )
    jobs = config.jobs
    if not 0 <= jobs.spot_discount_percent < 100:
        raise ConfigError(f"{src}: jobs.spot_discount_percent must be from 0 to below 100, "
                          f"got {jobs.spot_discount_percent}")
    if jobs.transform_min_runs < 2:
        raise ConfigError(f"{src}: jobs.transform_min_runs must be at least 2, got {jobs.transform_min_runs}")
    schedule = config.schedule
    for key in ("nightly_at", "weekly_at"):
        value = getattr(schedule, key)
        hours, _, minutes = value.partition(":")
        if not (hours.isdigit() and minutes.isdigit() and len(minutes) == 2 and int(hours) < 24 and int(minutes) < 60):
            raise ConfigError(f"{src}: schedule.{key} must be a time as HH:MM, got {value!r}")
    if schedule.weekly_day.lower() not in WEEKDAYS:
        raise ConfigError(f"{src}: schedule.weekly_day must be a day of the week, got {schedule.weekly_day!r}")
    try:
        ZoneInfo(schedule.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"{src}: schedule.timezone is not a known time zone: {schedule.timezone!r}") from None
    _validate_pricing(config)
    email = config.email
    if email.transport not in ("smtp", "ses"):
        raise ConfigError(f"{src}: email.transport must be \"smtp\" or \"ses\", got {email.transport!r}")
    if not 1 <= email.smtp_port <= 65535:
        raise ConfigError(f"{src}: email.smtp_port must be from 1 to 65535, got {email.smtp_port}")
    if email.smtp_ssl and email.smtp_starttls:
        raise ConfigError(f"{src}: email.smtp_ssl and email.smtp_starttls cannot both be true")
    if (email.transport == "smtp" and email.smtp_username and not (email.smtp_starttls or email.smtp_ssl)
            and not email.smtp_allow_plain_login):
        raise ConfigError(
            f"{src}: email.smtp_username is set but neither email.smtp_starttls nor email.smtp_ssl is: "
            "the password would travel unencrypted (set one, or email.smtp_allow_plain_login = true)"
        )


PRICING_API_REGIONS = ("us-east-1", "eu-central-1", "ap-south-1")


def _validate_pricing(config: AuditConfig) -> None:
    src, pricing = config.source, config.pricing
    if pricing.api_region not in PRICING_API_REGIONS:
        raise ConfigError(f"{src}: pricing.api_region must be one of {', '.join(PRICING_API_REGIONS)} "
                          f"(where the Price List API is), got {pricing.api_region!r}")
    for key in ("refresh_after_days", "max_price_age_days"):
        if getattr(pricing, key) < 0:
            raise ConfigError(f"{src}: pricing.{key} must be 0 (off) or more days, got {getattr(pricing, key)}")
    bad_terms = [t for t in pricing.savings_plan_terms if t not in ("ONE_YEAR", "THREE_YEARS")]
    if bad_terms or not pricing.savings_plan_terms:
        raise ConfigError(f'{src}: pricing.savings_plan_terms must name "ONE_YEAR" and/or "THREE_YEARS", '
                          f"got {list(pricing.savings_plan_terms)}")
    if pricing.savings_plan_payment not in ("NO_UPFRONT", "PARTIAL_UPFRONT", "ALL_UPFRONT"):
        raise ConfigError(f"{src}: pricing.savings_plan_payment must be NO_UPFRONT, PARTIAL_UPFRONT or "
                          f"ALL_UPFRONT, got {pricing.savings_plan_payment!r}")
    if pricing.savings_plan_lookback not in ("SEVEN_DAYS", "THIRTY_DAYS", "SIXTY_DAYS"):
        raise ConfigError(f"{src}: pricing.savings_plan_lookback must be SEVEN_DAYS, THIRTY_DAYS or SIXTY_DAYS, "
                          f"got {pricing.savings_plan_lookback!r}")
    if pricing.basis not in ("list", "effective"):
        raise ConfigError(f'{src}: pricing.basis must be "list" or "effective", got {pricing.basis!r}')
