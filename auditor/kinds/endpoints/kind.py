"""Endpoints (real-time, async, serverless; their variants and inference components), as a resource
kind: discover, collect their metrics, assess, judge and price them, one region at a time. Its
section is the tuple of EndpointReports (`KIND.section(report)`), which plans and charts read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from auditor.analyse.rules.base import RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.collect.cloudwatch import CollectedMetrics, collect_metrics
from auditor.collect.config_cache import ConfigCache
from auditor.collect.session import AwsClients, RegionAccessError
from auditor.config import AuditConfig
from auditor.kinds.base import (
    Audience,
    AudienceOf,
    Judge,
    KindResult,
    Owned,
    RegionBoard,
    RegionScope,
    ResourceKind,
    ResourcePrice,
)
from auditor.kinds.endpoints.alarms import discover_alarms
from auditor.kinds.endpoints.assessment import (
    EndpointAssessment,
    EndpointFleet,
    assess_components,
    assess_endpoint,
    component_invocations,
)
from auditor.kinds.endpoints.autoscaling import component_resource_id, discover_autoscaling, variant_resource_id
from auditor.kinds.endpoints.binding import BINDING, SHARED_BINDING
from auditor.kinds.endpoints.candidates import candidate_load
from auditor.kinds.endpoints.consolidation import RULE_ID as CONSOLIDATION
from auditor.kinds.endpoints.consolidation import SHARED_TYPE, CandidateLoad, shape_key
from auditor.kinds.endpoints.control import apply_skips, config_for_endpoint
from auditor.kinds.endpoints.discover import describe_models, discover_endpoints, single_model
from auditor.kinds.endpoints.enhanced import EnhancedSeries, enhanced_queries
from auditor.kinds.endpoints.evidence import EVIDENCE
from auditor.kinds.endpoints.judge import judge_endpoint
from auditor.kinds.endpoints.metrics import plan_queries
from auditor.kinds.endpoints.models import (
    AutoScaling,
    Endpoint,
    EndpointKind,
    EndpointReport,
    InstanceUtilization,
    MetricsConfig,
    ModelNetwork,
    VariantReport,
    price_usage,
)
from auditor.kinds.endpoints.plans import plan_subjects
from auditor.kinds.endpoints.promql import PromQLClient, collect_placement
from auditor.kinds.endpoints.report import shapes
from auditor.kinds.endpoints.rules import RULES
from auditor.kinds.endpoints.target import TARGETS
from auditor.kinds.endpoints.verify import VERIFIERS, seen
from auditor.models import AuditError, CollectionStats, Finding, ResourceUtilization, Window
from auditor.values import iso, utilization_by_resource

if TYPE_CHECKING:
    from auditor.limits import RunLimits
    from auditor.progress import Progress


@dataclass(frozen=True)
class EndpointsResult:
    endpoints: tuple[EndpointReport, ...] = ()
    findings: tuple[Finding, ...] = ()
    errors: tuple[AuditError, ...] = ()
    fatal: tuple[AuditError, ...] = field(default=())  # also in errors: what stopped part of the region
    queries: int = 0  # metric queries, datapoints and GetMetricData calls of the region
    datapoints: int = 0
    calls: int = 0


def audit_endpoints(
    region: str,
    config: AuditConfig,
    clients: AwsClients,
    catalog: Catalog,
    window: Window,
    now: datetime,
    progress: Progress,
    limits: RunLimits,
    judge: Judge,
    board: RegionBoard | None = None,
    configs: ConfigCache | None = None,
) -> EndpointsResult:
    """`limits` are checked between calls (RunStopped ends the region); `judge` judges the fleet
    (the endpoints themselves are judged by this kind's engine); `board` is told what was
    discovered, so a region stopped later still lists its endpoints."""
    try:
        discovery = discover_endpoints(clients.client("sagemaker", region), region, config.aws.max_workers,
                                       should_stop=lambda: limits.reason() is not None, configs=configs)
    except RegionAccessError as exc:
        error = AuditError(region, None, "discover", exc.message)
        return EndpointsResult(errors=(error,), fatal=(error,))
    limits.add_endpoints(len(discovery.endpoints))
    if board is not None:
        discovered = discovery.endpoints
        board.record_partial(KEY, lambda reason: tuple(
            EndpointReport(replace(e, not_judged_reason=f"not audited: {reason}"), ()) for e in discovered))
    limits.check()
    errors: list[AuditError] = list(discovery.errors)
    checked = [check_catalog(e, catalog) for e in discovery.endpoints]
    skipped = [apply_skips(e, config, judge.rules) for e, _ in checked]
    endpoints = [e for e, _ in skipped]
    errors += [error for _, step_errors in (*checked, *skipped) for error in step_errors]
    endpoints, scaling_errors = attach_autoscaling(endpoints, clients, region)
    errors += scaling_errors
    endpoints, alarm_errors = attach_alarms(endpoints, clients, region)
    errors += alarm_errors
    endpoints, placement_errors = attach_placement(endpoints, clients, region, now, limits.check)
    errors += placement_errors
    if any(not region_priced(e, catalog) for e in endpoints):
        errors.append(AuditError(
            region, None, "recommend",
            f"the catalog has no list prices for {region} (as of {catalog.as_of}): costs and savings "
            f"omitted; set pricing.assume_prices_from to price it like another region",
        ))

    queries = plan_queries(endpoints, catalog)
    enhanced = EnhancedSeries()
    try:
        enhanced = enhanced_queries(clients.client("cloudwatch", region), region, endpoints)
    except RegionAccessError as exc:
        errors.append(AuditError(region, None, "collect", exc.message))
    errors += enhanced.errors
    queries += enhanced.queries
    progress.region_started(region, len(queries))
    limits.check()

    def on_batch(answered: int) -> None:
        progress.advanced(answered)
        limits.check()  # between GetMetricData calls: a stop or the deadline ends the region here

    fatal: tuple[AuditError, ...] = ()
    try:
        metrics = collect_metrics(clients.client("cloudwatch", region), region, queries, window, on_batch)
    except RegionAccessError as exc:
        error = AuditError(region, None, "collect", exc.message)
        errors.append(error)
        fatal = (error,)
        # Keep what discovery found, marked as not judged rather than judged on no data.
        endpoints = [
            e if e.not_judged_reason else replace(e, not_judged_reason=f"metrics not collected: {exc.message}")
            for e in endpoints
        ]
        metrics = CollectedMetrics()
    errors.extend(metrics.errors)

    # One endpoint at a time: assess, judge, price, keep its report, and let its frames go, so a
    # region of thousands of endpoints never holds every assessment at once.
    reports: list[EndpointReport] = []
    findings: list[Finding] = []
    candidates: list[CandidateLoad] = []
    for endpoint in endpoints:
        endpoint_config, tag_errors = config_for_endpoint(endpoint, config, judge.rules)
        errors.extend(tag_errors)
        assessed = assess_endpoint(endpoint, metrics, catalog, endpoint_config, window, now)
        assessed = replace(assessed, components=assess_components(endpoint, metrics, config, window),
                           component_calls=component_invocations(endpoint, metrics, window))
        judged = judge_endpoint(assessed, catalog, config)
        findings += judged
        candidate = consolidation_candidate(assessed, judged, config, window)
        if candidate is not None:
            candidates.append(candidate)
        reports.append(EndpointReport(
            endpoint=assessed.endpoint,
            variants=tuple(
                VariantReport(va.variant, va.monthly_cost_usd, va.utilization, series=chart_series(va.normalised),
                              average_instances=va.average_instances, price_basis=va.price_basis,
                              instances=va.instances, sizing_basis=va.sizing_basis,
                              model_latency_max_ms=latency_max_ms(va.raw))
                for va in assessed.variants
            ),
            components=assessed.components,
        ))
        metrics.release(endpoint.name)
    candidates, model_errors = attach_models(candidates, endpoints, clients, region, config, configs, catalog)
    errors += model_errors
    # Fleet-wide notes (which endpoints would gain from per-instance metrics), and consolidation: one per account.
    for account in sorted({e.account_id for e in endpoints}):
        fleet = EndpointFleet(account, region, tuple(e for e in endpoints if e.account_id == account),
                              tuple(c for c in candidates if c.account_id == account))
        findings += judge(fleet)
    reports = with_consolidations(reports, findings)
    return EndpointsResult(endpoints=tuple(reports), findings=tuple(findings), errors=tuple(errors), fatal=fatal,
                           queries=len(queries), datapoints=metrics.datapoints, calls=metrics.calls)


def with_consolidations(reports: list[EndpointReport], findings: list[Finding]) -> list[EndpointReport]:
    """Each member of a proposed consolidation marked with its shared endpoint (for routing)."""
    joins = {(f.resource.account_id, str(m.get("endpoint"))): f.resource.name
             for f in findings if f.rule == CONSOLIDATION and f.recommendation is not None
             for m in f.recommendation.details.get("members") or []}
    if not joins:
        return reports
    return [replace(r, consolidated_into=joins[key]) if (key := (r.endpoint.account_id, r.endpoint.name)) in joins
            else r for r in reports]


def consolidation_candidate(assessed: EndpointAssessment, judged: list[Finding], config: AuditConfig,
                            window: Window) -> CandidateLoad | None:
    """A single-model endpoint's load for consolidate-onto-components (kept once its frames go),
    where the rule applies to it and every rule of its own judged it (no gate stopped them); its
    model is read after the loop, only if it may be grouped (`attach_models`)."""
    endpoint = assessed.endpoint
    model = single_model(endpoint)
    if model is None or not consolidation_applies(endpoint, config):
        return None
    if any(f.rule in UNJUDGED for f in judged):
        return None
    busy = float(getattr(settings_for(CONSOLIDATION, config), "busy_percent", 50.0))
    return candidate_load(assessed, judged, model, busy, window)


def latency_max_ms(raw: pd.DataFrame) -> float | None:
    """The window's highest ModelLatency maximum (published in microseconds), in milliseconds."""
    if "ModelLatency:Maximum" not in raw.columns:
        return None
    values = raw["ModelLatency:Maximum"].dropna()
    return None if values.empty else round(float(values.max()) / 1000.0, 3)


def chart_series(normalised: pd.DataFrame) -> pd.DataFrame:
    """What the report's charts draw (the per-period maxima), in float32: a report of thousands of
    endpoints keeps this for each variant until it is written, not the whole collected frame."""
    return normalised[[c for c in normalised.columns if c.endswith(":Maximum")]].astype("float32")


def attach_autoscaling(
    endpoints: list[Endpoint], clients: AwsClients, region: str
) -> tuple[list[Endpoint], list[AuditError]]:
    """Each variant's and inference component's scaling target and policies; unknown (and so not
    judged) if they cannot be read. Read where a rule judges them: real-time variants of two or more
    instances (no-autoscaling), async endpoints (async-scale-from-zero), endpoints hosting inference
    components (component-scale-to-zero)."""
    judged = [e for e in endpoints if not e.not_judged_reason and not (e.skipped_reason and not e.skipped_rules)]
    wanted = [e for e in judged if e.kind is EndpointKind.ASYNC or e.inference_components
              or (e.kind is EndpointKind.REAL_TIME and any(v.instance_count >= 2 for v in e.variants))]
    if not wanted:
        return endpoints, []  # nothing a rule would judge: spare the calls
    try:
        targets = discover_autoscaling(clients.client("application-autoscaling", region), region)
    except RegionAccessError as exc:
        return endpoints, [AuditError(region, None, "discover", f"{exc.message}: no-autoscaling, async-scale-from-zero "
                                                                "and component-scale-to-zero not judged")]
    return [
        replace(
            e,
            autoscaling_known=True,
            variants=tuple(replace(v, autoscaling=targets.get(variant_resource_id(e.name, v.name)))
                           for v in e.variants),
            inference_components=tuple(replace(c, autoscaling=targets.get(component_resource_id(c.name)))
                                       for c in e.inference_components),
        )
        for e in endpoints
    ], []


def attach_alarms(
    endpoints: list[Endpoint], clients: AwsClients, region: str
) -> tuple[list[Endpoint], list[AuditError]]:
    """Each async endpoint's queue alarms, and each instance-backed endpoint's alarms on its
    variants' errors and latency (a plan's deployment rolls back on them): one paged DescribeAlarms
    for the region, only when it has such an endpoint to judge; unknown (None) if they cannot be
    read (no-queue-alarm is then not judged, and plans define alarms of their own)."""
    judged = [e for e in endpoints if not e.not_judged_reason and not (e.skipped_reason and not e.skipped_rules)]
    queued = any(e.kind is EndpointKind.ASYNC for e in judged)
    deployable = any(v.instance_type for e in judged for v in e.variants)
    if not (queued or deployable):
        return endpoints, []
    try:
        alarms = discover_alarms(clients.client("cloudwatch", region), region)
    except RegionAccessError as exc:
        unjudged = ["no-queue-alarm and async-scale-from-zero not judged"] if queued else []
        unjudged += ["plans define rollback alarms of their own"] if deployable else []
        return endpoints, [AuditError(region, None, "discover", f"{exc.message}: {', and '.join(unjudged)}")]
    return [replace(e, queue_alarms=alarms.queue.get(e.name, ()) if e.kind is EndpointKind.ASYNC else None,
                    backlog_alarms=alarms.backlog.get(e.name, ()) if e.kind is EndpointKind.ASYNC else None,
                    rollback_alarms=alarms.rollback.get(e.name, ()))
            for e in endpoints], []


# The gates' notes: an endpoint that has one was not judged on its load.
UNJUDGED = frozenset({"not-in-service", "insufficient-data"})


def consolidation_applies(endpoint: Endpoint, config: AuditConfig) -> bool:
    """consolidate-onto-components is enabled and the endpoint is not skipped for it."""
    settings = settings_for(CONSOLIDATION, config)
    return (settings is not None and settings.enabled and CONSOLIDATION not in endpoint.skipped_rules
            and not (endpoint.skipped_reason and not endpoint.skipped_rules))


def settings_for(rule_id: str, config: AuditConfig) -> RuleSettings | None:
    rule = next((r for r in RULES if r.id == rule_id), None)
    return None if rule is None else settings_of(rule, config)


def attach_models(candidates: list[CandidateLoad], endpoints: list[Endpoint], clients: AwsClients, region: str,
                  config: AuditConfig, configs: ConfigCache | None,
                  catalog: Catalog) -> tuple[list[CandidateLoad], list[AuditError]]:
    """The model network of each candidate that may be grouped (not busy or otherwise left out, and
    one of two or more such in its account with the same KMS key and kind of shape): DescribeModel,
    kept with its config between runs. A candidate whose model could not be read is left out, with
    the reason."""
    keyed = [(c, (c.account_id, key)) for c in candidates
             if c.excluded is None and (key := shape_key(c, catalog)) is not None]
    alike = Counter(key for _, key in keyed)
    wanted = {(c.account_id, c.endpoint) for c, key in keyed if alike[key] >= 2}
    if not wanted:
        return candidates, []
    by_name = {(e.account_id, e.name): e for e in endpoints}
    asked = [by_name[key] for key in sorted(wanted) if key in by_name]
    found, errors = describe_models(clients.client("sagemaker", region), region, asked, config.aws.max_workers,
                                    configs)
    read = []
    for candidate in candidates:
        answer = found.get((candidate.account_id, candidate.endpoint))
        if isinstance(answer, ModelNetwork) and not answer.single_container:
            candidate = replace(candidate, excluded="its model is an inference pipeline or a multi-model container, "
                                                    "which one inference component does not host")
        elif isinstance(answer, ModelNetwork):
            candidate = replace(candidate, network=answer)
        elif isinstance(answer, str):
            candidate = replace(candidate, excluded=f"its model could not be described: {answer}")
        read.append(candidate)
    return read, errors


def wants_placement(endpoint: Endpoint) -> bool:
    """Real-time endpoints hosting inference components whose config enables detailed observability."""
    return (endpoint.kind is EndpointKind.REAL_TIME and bool(endpoint.inference_components)
            and endpoint.metrics_config is not None and endpoint.metrics_config.detailed_observability is True
            and not endpoint.not_judged_reason and not (endpoint.skipped_reason and not endpoint.skipped_rules))


def attach_placement(
    endpoints: list[Endpoint], clients: AwsClients, region: str, now: datetime,
    between_calls: Callable[[], None] | None = None,
) -> tuple[list[Endpoint], list[AuditError]]:
    """Each such endpoint's component placement (PromQL, one query for the region's endpoints while
    their instances fit one answer); none, and no call, when no endpoint enables it."""
    expected = {e.name: sum(max(v.instance_count, (v.managed_scaling.max_instances or 0) if v.managed_scaling else 0)
                            for v in e.variants)
                for e in endpoints if wants_placement(e)}
    if not expected:
        return endpoints, []
    end = now.replace(minute=0, second=0, microsecond=0)
    found = collect_placement(PromQLClient(clients, region, between_calls), region, expected, end)
    return [replace(e, placement=found.placements.get(e.name)) if e.name in expected else e
            for e in endpoints], list(found.errors)


def check_catalog(endpoint: Endpoint, catalog: Catalog) -> tuple[Endpoint, list[AuditError]]:
    """An instance type the catalog does not know cannot be normalised: do not judge it."""
    if endpoint.not_judged_reason:
        return endpoint, []
    unknown = sorted({v.instance_type for v in endpoint.variants
                      if v.instance_type and not catalog.shape(v.instance_type)})
    unstated = sorted({v.instance_type for v in endpoint.variants
                       if v.instance_type and (shape := catalog.shape(v.instance_type))
                       and not shape.accelerators_known})
    if unknown:
        reason = f"instance type {', '.join(unknown)} not in the catalog: not judged"
    elif unstated:
        reason = (f"the price list does not state the GPU count or GPU memory of {', '.join(unstated)}: "
                  "not judged")
    else:
        return endpoint, []
    return (replace(endpoint, not_judged_reason=reason),
            [AuditError(endpoint.region, endpoint.name, "analyse", reason)])


def region_priced(endpoint: Endpoint, catalog: Catalog) -> bool:
    return all(
        catalog.hourly_price(v.instance_type, endpoint.region) is not None
        for v in endpoint.variants
        if v.instance_type and catalog.shape(v.instance_type)
    )


KEY = "endpoints"


def audit(scope: RegionScope) -> KindResult[tuple[EndpointReport, ...]]:
    result = audit_endpoints(scope.region, scope.config, scope.clients, scope.catalog, scope.window, scope.now,
                             scope.progress, scope.limits, scope.judge, scope.board, scope.configs)
    return KindResult(result.endpoints, result.findings, result.errors, result.fatal,
                      CollectionStats(scope.account_id, scope.region, result.queries, result.datapoints,
                                      result.calls))


def merge(sections: Sequence[tuple[EndpointReport, ...]]) -> tuple[EndpointReport, ...]:
    return tuple(e for s in sections for e in s)


def owned(section: tuple[EndpointReport, ...]) -> Iterable[Owned]:
    """Each endpoint with its tags, and each shared endpoint a consolidation proposes with the tags
    all its members carry alike (one owner's endpoints: that owner's plan; several owners': the
    default audience's)."""
    shared: dict[tuple[str, str, str], dict[str, str]] = {}
    for e in section:
        yield Owned(e.endpoint.account_id, e.endpoint.region, "endpoint", e.endpoint.name, e.endpoint.tags)
        if e.consolidated_into:
            key = (e.endpoint.account_id, e.endpoint.region, e.consolidated_into)
            common = shared.get(key)
            shared[key] = (dict(e.endpoint.tags) if common is None
                           else {k: v for k, v in common.items() if e.endpoint.tags.get(k) == v})
    for (account, region, name), tags in shared.items():
        yield Owned(account, region, SHARED_TYPE, name, tags)


def only(section: tuple[EndpointReport, ...], audience_of: AudienceOf,
         audience: Audience) -> tuple[EndpointReport, ...]:
    return tuple(e for e in section
                 if audience_of(e.endpoint.account_id, e.endpoint.region, "endpoint", e.endpoint.name) == audience)


def price_uses(section: tuple[EndpointReport, ...]) -> Iterable[ResourcePrice]:
    for report in section:
        for variant in report.variants:
            if variant.variant.instance_type:
                yield ResourcePrice("endpoint", report.endpoint.name, price_usage(report.endpoint),
                                    variant.variant.instance_type, report.endpoint.region,
                                    hosting_monthly_usd=variant.monthly_cost_usd)


def _autoscaling(scaling: AutoScaling | None) -> dict[str, Any] | None:
    if scaling is None:
        return None
    return {"min_capacity": scaling.min_capacity, "max_capacity": scaling.max_capacity,
            "policies": list(scaling.policies)}


def _metrics_config(config: MetricsConfig | None) -> dict[str, Any] | None:
    if config is None:
        return None
    return {"enhanced_metrics": config.enhanced_metrics, "detailed_observability": config.detailed_observability,
            "publish_frequency_seconds": config.publish_frequency_seconds}


def _instance(instance: InstanceUtilization) -> dict[str, Any]:
    """One instance's utilisation (enhanced metrics), and each of its GPUs'."""
    def figures(u: ResourceUtilization) -> dict[str, float]:
        return {"avg": u.avg, "p95": u.p95, "max": u.max}

    return {
        "instance_id": instance.instance_id,
        "utilization": {r.value: figures(u) for r, u in instance.utilization.by_resource.items()},
        "accelerators": {
            device: {"gpu": figures(gpu),
                     "gpu_memory": (figures(instance.accelerator_memory[device])
                                    if device in instance.accelerator_memory else None)}
            for device, gpu in sorted(instance.accelerators.items())
        } or None,
    }


def to_dict(section: tuple[EndpointReport, ...]) -> Iterator[dict[str, Any]]:
    """Made one endpoint at a time (the JSON report streams them: thousands of endpoints are never
    held whole as Python objects)."""
    return (
        {
            "account_id": e.endpoint.account_id,
            "region": e.endpoint.region,
            "name": e.endpoint.name,
            "status": e.endpoint.status,
            "kind": e.endpoint.kind.value,
            "created_at": iso(e.endpoint.created_at),
            "tags": e.endpoint.tags,
            "not_judged_reason": e.endpoint.not_judged_reason,
            "skipped_reason": e.endpoint.skipped_reason,
            "skipped_rules": sorted(e.endpoint.skipped_rules) or None,
            "metrics_config": _metrics_config(e.endpoint.metrics_config),
            "variants": [
                {
                    "name": v.variant.name,
                    "instance_type": v.variant.instance_type,
                    "instance_count": v.variant.instance_count,
                    "serverless_memory_mb": v.variant.serverless_memory_mb,
                    "monthly_cost_usd": v.monthly_cost_usd,
                    "price_basis": v.price_basis,
                    "average_instances": v.average_instances,
                    "utilization": utilization_by_resource(v.utilization),
                    "invocations": v.utilization.invocations if v.utilization else None,
                    "instance_metric_days": v.utilization.instance_metric_days if v.utilization else None,
                    "autoscaling": (_autoscaling(v.variant.autoscaling) if e.endpoint.autoscaling_known
                                    else "unknown"),
                    "shadow": v.variant.shadow,
                    "weight": v.variant.weight,
                    "managed_instance_scaling": (
                        None if v.variant.managed_scaling is None else
                        {"min_instances": v.variant.managed_scaling.min_instances,
                         "max_instances": v.variant.managed_scaling.max_instances}),
                    "sizing_basis": v.sizing_basis,
                    "instances": [_instance(i) for i in v.instances] or None,
                }
                for v in e.variants
            ],
            "inference_components": [
                {
                    "name": c.component.name,
                    "variant": c.component.variant,
                    "status": c.component.status,
                    "copy_count": c.component.copy_count,
                    "per_copy": {"cpu_cores": c.component.cpu_cores, "accelerators": c.component.accelerators,
                                 "memory_mb": c.component.memory_mb},
                    "utilization": utilization_by_resource(c.utilization),
                }
                for c in e.components
            ],
        }
        for e in section
    )


def monthly_cost(section: tuple[EndpointReport, ...], _window: Window) -> float:
    """The variants' monthly run rate (an unpriced variant counts nothing; it says so where listed)."""
    return round(sum(v.monthly_cost_usd or 0.0 for e in section for v in e.variants), 2)


KIND: ResourceKind[tuple[EndpointReport, ...]] = ResourceKind(
    shapes=shapes,
    key=KEY,
    title="Endpoints",
    order=10,
    iam_actions=frozenset({
        "sagemaker:Search", "sagemaker:DescribeEndpointConfig", "sagemaker:ListTags",
        "sagemaker:ListInferenceComponents", "sagemaker:DescribeModel",
        "sagemaker:DescribeInferenceComponent", "application-autoscaling:DescribeScalableTargets",
        "application-autoscaling:DescribeScalingPolicies", "cloudwatch:GetMetricData",
        "cloudwatch:DescribeAlarms",
        # The InstanceId / AcceleratorId series of enhanced metrics; with GetMetricData, also what
        # CloudWatch's PromQL query (component placement) needs: it has no IAM action of its own.
        "cloudwatch:ListMetrics",
    }),
    enabled=lambda config: True,
    audit=audit,
    empty=(),
    merge=merge,
    to_dict=to_dict,
    owned=owned,
    only=only,
    price_uses=price_uses,
    monthly_cost=monthly_cost,
    rules=RULES,
    targets=TARGETS,  # the endpoints it changes, and the shared endpoint a consolidation creates
    bindings={"endpoint": BINDING, SHARED_TYPE: SHARED_BINDING},
    evidence=EVIDENCE,
    verifiers=VERIFIERS,
    seen=seen,
    plan_subjects=plan_subjects,
)
