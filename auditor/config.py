"""The configuration: one frozen dataclass per TOML section, each key declared with `setting()`
(its default, its doc line and its bounds; see auditor/schema.py), and the checks that span keys.
The sections here are the core's; each resource kind declares its own sections' classes in its
package (`ResourceKind.settings`, e.g. [jobs]) and each rule its settings class in its module
(auditor/kinds/<kind>/rules/); reading the file (auditor/config_file.py) joins them through the
registry (auditor/kinds/registry.py). This module imports neither the kinds, the rules nor the
delivery code.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from auditor import schema
from auditor.errors import ConfigError
from auditor.schema import (
    ACCOUNT_ID,
    ACCOUNT_ID_PLACEHOLDER,
    EMAIL,
    ENV_NAME,
    EXTERNAL_ID,
    HEADER,
    HOSTNAME,
    HTTP_URL,
    PATH,
    PATTERN,
    REGION,
    REGION_OR_ALL,
    ROLE_ARN,
    ROLE_ARN_MAYBE_TEMPLATE,
    ROLE_ARN_TEMPLATE,
    ROLE_NAME,
    ROUTE,
    SCHEDULE_TIME,
    SNS_TOPIC_ARN,
    TAG_KEY,
    TIME_ZONE,
    setting,
)

# CloudWatch keeps 1-hour data for 455 days; nothing older can be asked for.
MAX_LOOKBACK_DAYS = 455
SIZING_STATISTICS = ("avg", "p50", "p90", "p95", "p99", "max")
DEFAULT_MIN_DAYS = 7
DEFAULT_MIN_IDLE_DAYS = 7  # a whole week: a weekly pattern (quiet weekends) is not idleness
MAX_MIN_IDLE_DAYS = 90
PERCENT = {"above": 0, "maximum": 100}  # a threshold or a target: (0, 100]
CEILING = {"minimum": 0, "maximum": 100}  # a share that may be 0: [0, 100]
SAVING = {"minimum": 0, "below": 100}  # a saving of 100% or more is not a saving: [0, 100)


ALL_REGIONS = "all"


@dataclass(frozen=True)
class AwsConfig:
    regions: tuple[str, ...] = setting(("us-east-1",), "regions to audit, or \"all\": every region enabled",
                                       check=REGION_OR_ALL, non_empty=True)
    profile: str | None = setting(None, "AWS profile; empty: the default credential chain")
    accounts: tuple[str, ...] = setting((), "several accounts (12-digit ids), entered by AssumeRole",
                                        check=ACCOUNT_ID)
    organization: bool = setting(False, "true: every ACTIVE account of the organisation")
    exclude_accounts: tuple[str, ...] = setting((), "account ids left out", check=ACCOUNT_ID)
    role_name: str | None = setting(None, "the role to assume in each account", check=ROLE_NAME)
    role_arn_template: str | None = setting(None, "or a full role ARN with {account_id}", check=ROLE_ARN_TEMPLATE)
    external_id: str | None = setting(None, "passed to AssumeRole when the member role requires one",
                                      check=EXTERNAL_ID)
    lookback_days: int = setting(14, "days of metrics (CloudWatch retention)", minimum=1,
                                 maximum=MAX_LOOKBACK_DAYS)
    period_seconds: int = setting(3600, "metric period", minimum=60, maximum=86400, multiple_of=60)
    max_workers: int = setting(8, "parallel Describe calls per region", minimum=1, maximum=64)
    # A scheduled job must not hang on a dead endpoint: short timeouts, few attempts, a deadline.
    connect_timeout_seconds: float = setting(5.0, "per call", minimum=0.1, maximum=300)
    read_timeout_seconds: float = setting(30.0, "per call", minimum=0.1, maximum=900)
    max_attempts: int = setting(5, "per call, the first included", minimum=1, maximum=20)
    deadline_minutes: float = setting(0.0, "the whole run; 0: automatic, 30 minutes + 0.6 s per endpoint",
                                      minimum=0, maximum=24 * 60)


@dataclass(frozen=True)
class ThresholdsConfig:
    """A resource is under-used when its sizing statistic stays below its threshold (percent)."""

    cpu: float = setting(50.0, "percent", **PERCENT)
    memory: float = setting(50.0, "percent", **PERCENT)
    gpu: float = setting(50.0, "percent", **PERCENT)
    gpu_memory: float = setting(50.0, "percent", **PERCENT)
    sizing_statistic: str = setting("p95", "the statistic of the per-period values", choices=SIZING_STATISTICS)


@dataclass(frozen=True)
class RecommendConfig:
    target_utilization: float = setting(70.0, "the advised shape runs every resource at or below this", **PERCENT)
    min_instances: int | None = setting(None, "unset: never fewer than min(current, 2)", minimum=1, maximum=1000)
    min_days: int = setting(DEFAULT_MIN_DAYS, "less data, or a younger endpoint: no verdict; unset: at most "
                            "the lookback", minimum=1, maximum=MAX_LOOKBACK_DAYS, within_lookback=True)
    # Not capped at the lookback, unlike min_days: a shorter audit withholds these verdicts instead.
    min_idle_days: int = setting(DEFAULT_MIN_IDLE_DAYS, "days of data a delete or idle verdict needs (idle, "
                                 "variant-unused, hyperpod-idle-nodes), whatever the lookback", minimum=1,
                                 maximum=MAX_MIN_IDLE_DAYS)
    peak_statistic: str = setting("max", "the observed peak the advice must hold", choices=SIZING_STATISTICS)
    allow_architecture_change: bool = setting(False, "true: may advise Graviton")
    allow_burstable: bool = setting(False, "true: may advise t2/t3")
    min_savings_percent: float = setting(10.0, "smaller savings are not worth a redeploy", **SAVING)
    # Plans and their risk (docs/plans.md).
    latency_objective_ms: float = setting(0.0, "ModelLatency p99 objective; a plan whose variant's latency "
                                          "may near it is load-test first; 0: none", minimum=0, maximum=3_600_000)
    load_test_role_arn: str | None = setting(None, "the role an Inference Recommender load test runs as "
                                             "({account_id} allowed); unset: no ready load-test request",
                                             check=ROLE_ARN_MAYBE_TEMPLATE)


@dataclass(frozen=True)
class PricingConfig:
    # Use this region's list prices where the catalog has none for the endpoint's region.
    assume_prices_from: str | None = setting(None, "price regions without prices like this one", check=REGION)
    api_region: str = setting("us-east-1", "where the Price List API is called",
                              choices=("us-east-1", "eu-central-1", "ap-south-1"))
    refresh_after_days: int = setting(7, "`audit run` refreshes a price cache this old; 0: never by itself",
                                      minimum=0, maximum=3650)
    fetch_when_missing: bool = setting(False, "true: `audit run` fetches prices when there is no cache yet")
    cache_path: str = setting("", "default: prices/sagemaker-prices.json in the user's data directory",
                              check=PATH)
    max_price_age_days: int = setting(365, "older prices get a warning line in every report; 0: none",
                                      minimum=0, maximum=3650)
    basis: str = setting("list", "list | effective (the account's own rates)", choices=("list", "effective"))
    # AWS's SageMaker Savings Plans recommendation (ce:GetSavingsPlansPurchaseRecommendation)
    savings_plans: bool = setting(False, "true: report AWS's Savings Plans recommendation")
    savings_plan_terms: tuple[str, ...] = setting(("ONE_YEAR", "THREE_YEARS"), "terms",
                                                  choices=("ONE_YEAR", "THREE_YEARS"), non_empty=True)
    savings_plan_payment: str = setting("NO_UPFRONT", "payment option",
                                        choices=("NO_UPFRONT", "PARTIAL_UPFRONT", "ALL_UPFRONT"))
    savings_plan_lookback: str = setting("THIRTY_DAYS", "usage the recommendation rests on",
                                         choices=("SEVEN_DAYS", "THIRTY_DAYS", "SIXTY_DAYS"))


@dataclass(frozen=True)
class SkipConfig:
    endpoints: tuple[str, ...] = setting((), "endpoint name patterns (fnmatch) never audited", check=PATTERN)


@dataclass(frozen=True)
class RulesConfig:
    """The `[rules.<id>]` tables the config set, by rule id, each an instance of its rule's own
    settings class (auditor/kinds/<kind>/rules/); a rule not here has its class's defaults. Read them
    with `settings_of(rule, config)`."""

    configured: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        # Equal configs compare equal: tables that only restate the defaults are dropped.
        kept = tuple(sorted((i, s) for i, s in dict(self.configured).items() if s != type(s)()))
        object.__setattr__(self, "configured", kept)

    def get(self, rule_id: str) -> Any | None:
        return dict(self.configured).get(rule_id)

    def replaced(self, rule_id: str, settings: Any) -> RulesConfig:
        return RulesConfig(tuple({**dict(self.configured), rule_id: settings}.items()))


SettingsT = TypeVar("SettingsT")


@dataclass(frozen=True)
class KindsConfig:
    """The resource kinds' own sections the config set (`[jobs]`, `[workspaces]`, ...), by section
    name, each an instance of the settings class its kind declares (`ResourceKind.settings`); a
    section not here has its class's defaults. A kind reads its own through the accessor its
    settings class defines (e.g. `JobsConfig.of(config)`)."""

    configured: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        # Equal configs compare equal: sections that only restate the defaults are dropped.
        kept = tuple(sorted((n, s) for n, s in dict(self.configured).items() if s != type(s)()))
        object.__setattr__(self, "configured", kept)

    def section(self, name: str, cls: type[SettingsT]) -> SettingsT:
        """The section `name` as `cls` (its defaults where the config has none)."""
        configured = dict(self.configured).get(name)
        return configured if isinstance(configured, cls) else cls()


@dataclass(frozen=True)
class EmailConfig:
    sender: str | None = setting(None, "the From address", check=EMAIL)
    recipients: tuple[str, ...] = setting((), "addresses the report goes to", check=EMAIL)
    transport: str = setting("smtp", "smtp | ses", choices=("smtp", "ses"))
    smtp_host: str = setting("localhost", "SMTP server", check=HOSTNAME)
    smtp_port: int = setting(25, "SMTP port", minimum=1, maximum=65535)
    smtp_starttls: bool = setting(False, "STARTTLS after connecting")
    smtp_ssl: bool = setting(False, "TLS from the start (not both)")
    smtp_username: str | None = setting(None, "with a username, smtp_starttls or smtp_ssl is required",
                                        check=HEADER)
    smtp_password_env: str | None = setting(None, "NAME of the environment variable holding the password",
                                            check=ENV_NAME)
    # Log in over a connection with neither STARTTLS nor SSL (the password travels in clear).
    smtp_allow_plain_login: bool = setting(False, "the password may travel unencrypted")
    ses_region: str | None = setting(None, "SES region; unset: us-east-1", check=REGION)
    subject_prefix: str = setting("SageMaker audit", "the subject's first words", check=HEADER)
    # Send each owner only their endpoints: the tag that holds the owner's email address.
    route_by_tag: str | None = setting(None, "the tag holding each owner's address", check=TAG_KEY)
    # Where unsent messages wait for `audit send-outbox`; default: the user's data directory.
    outbox_dir: str | None = setting(None, "unsent messages; default: the user's data directory", check=PATH)
    # With route_by_tag: mail an owner whose endpoints have no finding above info too.
    send_empty_owner_reports: bool = setting(False, "also mail owners with no finding above info")


@dataclass(frozen=True)
class ChatConfig:
    """Slack and Teams summaries (auditor/deliver/chat.py). Webhook URLs are secrets: the config
    names the environment variables that hold them, never the URLs."""

    slack_webhook_env: str | None = setting(None, "NAME of the variable holding a Slack webhook URL",
                                            check=ENV_NAME)
    teams_webhook_env: str | None = setting(None, "NAME of the variable holding a Teams webhook URL",
                                            check=ENV_NAME)
    route_by_tag: str | None = setting(None, "endpoints whose tag value has a route go there", check=TAG_KEY)
    slack_routes: tuple[str, ...] = setting((), '"<tag value>=<ENV NAME>"', check=ROUTE)
    teams_routes: tuple[str, ...] = setting((), '"<tag value>=<ENV NAME>"', check=ROUTE)
    report_url: str | None = setting(None, "a link to the full report in every post", check=HTTP_URL)
    top_plans: int = setting(5, "plans listed in a post, largest saving first", minimum=1, maximum=20)
    timeout_seconds: float = setting(10.0, "per post", above=0, maximum=120)
    nightly: bool = setting(True, "the nightly job posts when a webhook is configured")
    weekly: bool = setting(True, "the weekly digest job posts when a webhook is configured")

    def routes(self, service: str) -> dict[str, str]:
        """`slack_routes` or `teams_routes` (checked when read) as {tag value: variable name}."""
        return schema.route_table(getattr(self, f"{service}_routes"))


@dataclass(frozen=True)
class HistoryConfig:
    path: str | None = setting(None, "default: history.sqlite3 in the user's data directory", check=PATH)


RISK_LEVELS = ("low", "medium", "high")
TRAFFIC_SHIFTING = ("canary", "linear")
TERMINATION_WAIT_SECONDS = 600  # the old fleet is kept this long after the switch, for a rollback
PROVISIONING_ALLOWANCE_SECONDS = 2400  # the green fleet's instances start and pass their health checks
MIN_DEPLOYMENT_TIMEOUT_SECONDS, MAX_DEPLOYMENT_TIMEOUT_SECONDS = 600, 28800  # SageMaker's bounds


# The tag that opts a resource in to `audit apply` (besides [apply] endpoints).
OPT_IN_TAG = ("auditor:apply", "allowed")


@dataclass(frozen=True)
class ApplyConfig:
    """`audit apply`: the write path, guarded (auditor/act/). Its credentials are its own, never
    the audit's read-only ones: with neither `profile` nor `role_arn`, apply refuses."""

    max_risk: str = setting("low", "only plans at or under this risk are applied", choices=RISK_LEVELS,
                            ignore_case=True)
    endpoints: tuple[str, ...] = setting((), "endpoint name patterns (fnmatch) opted in besides the "
                                         "auditor:apply=allowed tag", check=PATTERN)
    resources: tuple[str, ...] = setting((), "name patterns (fnmatch) opted in besides the tag, for every kind apply "
                                         "changes: endpoints, notebook instances, Studio apps "
                                         "(domain/space/type/name), Studio domains (by id), HyperPod clusters",
                                         check=PATTERN)
    profile: str | None = setting(None, "AWS profile for apply (its own least-privilege policy)")
    role_arn: str | None = setting(None, "or a role apply assumes (deploy/iam-apply-policy.json)", check=ROLE_ARN)
    wait_minutes: float = setting(60.0, "how long apply waits for the change to finish (the endpoint InService "
                                  "again, the notebook Stopped, the app Deleted, the cluster InService); a "
                                  "deployment is waited for at least as long as it may take (its "
                                  "MaximumExecutionTimeoutInSeconds plus TerminationWaitInSeconds)",
                                  above=0, maximum=24 * 60)
    alarm_topic_arn: str | None = setting(None, "SNS topic the rollback alarms notify", check=SNS_TOPIC_ARN)
    # 26: a nightly run's plan stays applicable until the next night's run is recorded (24 h, one
    # more across a daylight-saving change of [schedule] timezone, and an hour for that run itself).
    max_plan_age_hours: float = setting(26.0, "a plan is applied only from the latest run that read its account and "
                                        "region without an error, started less than this many hours ago",
                                        above=0, maximum=24 * 14)
    # The blue/green deployment of a plan's UpdateEndpoint (built when the audit makes the plan), bounded
    # by what SageMaker takes: a canary of at most 50% of the new fleet, linear steps of 10-50%, a
    # wait (baking period) of at most 3600 s; 0 is not offered, as no alarm can fire in no time.
    traffic_shifting: str = setting("canary", "\"canary\": a canary, then the rest; \"linear\": equal steps",
                                    choices=TRAFFIC_SHIFTING, ignore_case=True)
    canary_percent: int = setting(10, "the canary's share of the new fleet's capacity", minimum=1, maximum=50)
    linear_step_percent: int = setting(20, "each linear step's share of the new fleet's capacity", minimum=10,
                                       maximum=50)
    wait_interval_minutes: int = setting(10, "the baking period after each shift, while the alarms watch",
                                         minimum=1, maximum=60)

    @property
    def traffic_shifts(self) -> int:
        """How many times traffic moves: the canary then the rest, or each linear step."""
        if self.traffic_shifting == "linear":
            return -(-100 // self.linear_step_percent)
        return 2

    @property
    def deployment_timeout_seconds(self) -> int:
        """MaximumExecutionTimeoutInSeconds: the green fleet's start, a baking period after every
        shift, and the old fleet kept for a rollback (AWS: larger than the waits together)."""
        waits = self.traffic_shifts * self.wait_interval_minutes * 60 + TERMINATION_WAIT_SECONDS
        return max(MIN_DEPLOYMENT_TIMEOUT_SECONDS, PROVISIONING_ALLOWANCE_SECONDS + waits)


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass(frozen=True)
class ScheduleConfig:
    # Checked as `schedule` and pytz read them in auditor/tasks/scheduler.py, not after.
    nightly_at: str = setting("02:00", "HH:MM", check=SCHEDULE_TIME)
    weekly_day: str = setting("monday", "a day of the week", choices=WEEKDAYS, ignore_case=True)
    weekly_at: str = setting("07:00", "HH:MM", check=SCHEDULE_TIME)
    timezone: str = setting("UTC", "an IANA zone, e.g. \"Europe/Berlin\"", check=TIME_ZONE)


SECTIONS: dict[str, type] = {
    "aws": AwsConfig,
    "thresholds": ThresholdsConfig,
    "recommend": RecommendConfig,
    "pricing": PricingConfig,
    "email": EmailConfig,
    "chat": ChatConfig,
    "skip": SkipConfig,
    "history": HistoryConfig,
    "schedule": ScheduleConfig,
    "apply": ApplyConfig,
}


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
    kinds: KindsConfig = field(default_factory=KindsConfig)
    history: HistoryConfig = field(default_factory=HistoryConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    apply: ApplyConfig = field(default_factory=ApplyConfig)
    source: str = "defaults"
    # The keys the file set ("recommend.min_days"), and the keys a command-line flag set, with the flag.
    explicit: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    flags: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)

    def section(self, name: str, cls: type[SettingsT]) -> SettingsT:
        """The section `name` ([aws] ... or a kind's own, e.g. [jobs]) as its class `cls`."""
        return getattr(self, name) if name in SECTIONS else self.kinds.section(name, cls)

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
        """The config with the command line's --region and --lookback-days, checked like the keys."""
        aws = self.aws
        flags = dict(self.flags)
        if regions:
            aws = replace(aws, regions=_flag_value(AwsConfig, "regions", "--region", regions))
            flags["aws.regions"] = "--region"
        if lookback_days is not None:
            aws = replace(aws, lookback_days=_flag_value(AwsConfig, "lookback_days", "--lookback-days",
                                                         lookback_days))
            flags["aws.lookback_days"] = "--lookback-days"
        config = default_min_days(replace(self, aws=aws, flags=tuple(flags.items())))
        check_config(config)
        return config


def _flag_value(cls: type, name: str, flag: str, value: Any) -> Any:
    key = schema.key_of(cls, name)
    section = next(n for n, c in SECTIONS.items() if c is cls)
    where = f"{flag} ({section}.{name})"
    value = schema.coerce(key, list(value) if isinstance(value, list | tuple) else value, where)
    wrong = schema.problem(key, value)
    if wrong:
        raise ConfigError(f"{where} {wrong}")
    return value


def default_min_days(config: AuditConfig) -> AuditConfig:
    """recommend.min_days left unset is the default capped at the lookback: a 3-day audit needs 3 days."""
    if "recommend.min_days" in config.explicit:
        return config
    days = min(DEFAULT_MIN_DAYS, max(config.aws.lookback_days, 1))
    return replace(config, recommend=replace(config.recommend, min_days=days))


def check_config(config: AuditConfig) -> None:
    """The checks that span keys, in one place (each key's own bounds are checked when it is read)."""
    src, aws = config.source, config.aws
    if ALL_REGIONS in aws.regions and len(aws.regions) > 1:
        raise ConfigError(f'{src}: {config.origin("aws.regions")} is either "all" or a list of regions, '
                          f"got {schema.quote(list(aws.regions))}")
    if (aws.accounts or aws.organization) and not (aws.role_name or aws.role_arn_template):
        raise ConfigError(f"{src}: aws.role_name or aws.role_arn_template is required with aws.accounts "
                          "or aws.organization (the role to assume in each account)")
    lookback_flag = config.origin("aws.lookback_days")
    # "--lookback-days 5" when the flag set it, else "aws.lookback_days = 5" (the file's or the default).
    from_flag = lookback_flag != "aws.lookback_days"
    lookback = f"{lookback_flag} {aws.lookback_days}" if from_flag else f"aws.lookback_days = {aws.lookback_days}"
    settings: list[tuple[str, Any]] = [(name, getattr(config, name)) for name in SECTIONS]
    settings += list(config.kinds.configured)
    settings += [(f"rules.{rule_id}", values) for rule_id, values in config.rules.configured]
    for name, values in settings:
        for key in schema.keys(type(values)):
            days = getattr(values, key.name)
            if key.spec.within_lookback and days > aws.lookback_days:
                raise ConfigError(f"{src}: {name}.{key.name} ({days}) must be at most the lookback ({lookback})")
    email = config.email
    if email.smtp_ssl and email.smtp_starttls:
        raise ConfigError(f"{src}: email.smtp_ssl and email.smtp_starttls cannot both be true")
    if (email.transport == "smtp" and email.smtp_username and not (email.smtp_starttls or email.smtp_ssl)
            and not email.smtp_allow_plain_login):
        raise ConfigError(
            f"{src}: email.smtp_username is set but neither email.smtp_starttls nor email.smtp_ssl is: "
            "the password would travel unencrypted (set one, or email.smtp_allow_plain_login = true)"
        )
    apply = config.apply
    if apply.deployment_timeout_seconds > MAX_DEPLOYMENT_TIMEOUT_SECONDS:
        raise ConfigError(
            f"{src}: apply.wait_interval_minutes ({apply.wait_interval_minutes}) x {apply.traffic_shifts} linear "
            f"steps (apply.linear_step_percent = {apply.linear_step_percent}) makes a deployment longer than "
            f"SageMaker's {MAX_DEPLOYMENT_TIMEOUT_SECONDS // 3600} hours: take larger steps or a shorter wait")
    chat = config.chat
    if (chat.slack_routes or chat.teams_routes) and not chat.route_by_tag:
        raise ConfigError(f"{src}: chat.slack_routes and chat.teams_routes need chat.route_by_tag")
