"""consolidate-onto-components: single-model real-time endpoints of an account and region whose
models can share instances (the same VPC config, KMS key, network isolation and role; CPU models,
or GPU models on shapes of several devices) move onto one endpoint's inference components.

Each model gets `copies_per_model` copies, each reserving the model's measured peak at the target,
packed first-fit decreasing (packing.py, one copy of a model per instance) onto the cheapest
compatible shape, never fewer than `min_shared_instances` (the availability floor). The shared
fleet is judged by the time-aligned replay: hour by hour, the members' summed load over its
capacity. A group is proposed only where that replay's peak stays under the target and the saving
(the members' current cost minus the shared fleet's) is larger than their own plans' together.
Busy endpoints (a peak over `busy_percent`, or a scale-out among their own plans) are never grouped.
The plan creates the shared endpoint only: callers switch to it, and later runs find the old
endpoints idle and propose their deletion."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from auditor.analyse.rules.base import RESOURCE_LABELS, CollectionRule, RuleSettings, join_words, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointFleet
from auditor.kinds.endpoints.consolidation import (
    LOAD_TEST_FIRST,
    RULE_ID,
    SHARED_PREFIX,
    SHARED_TYPE,
    SHARED_VARIANT,
    CandidateLoad,
    SharedFleet,
    cheapest_fleet,
    compute_requirements,
    measured_periods,
    shape_key,
    shared_name,
)
from auditor.kinds.endpoints.models import ModelNetwork
from auditor.models import Finding, Judged, Recommendation, Resource, Severity
from auditor.recommend.change import settable_tags
from auditor.recommend.pricing import priced
from auditor.schema import setting

CALLERS_SWITCH = ("callers must switch to InvokeEndpoint with InferenceComponentName before the old endpoints go: "
                  "this plan creates the shared endpoint only, and later runs find the old endpoints idle and "
                  "propose their deletion")
SHOWN = 6


@dataclass(frozen=True)
class ConsolidationSettings(RuleSettings):
    busy_percent: float = setting(50.0, "an endpoint whose peak of any resource is over this share of its own "
                                        "capacity is never grouped", above=0, maximum=100)
    target_utilization: float = setting(70.0, "the time-aligned replay's peak stays under this share of the "
                                              "shared fleet; each copy reserves its model's peak at it",
                                        above=0, maximum=100)
    copies_per_model: int = setting(2, "copies of each model, on different instances (2: a model survives "
                                       "one instance's loss)", minimum=1, maximum=8)
    min_shared_instances: int = setting(2, "the shared fleet's availability floor", minimum=1, maximum=20)
    max_members: int = setting(10, "the most endpoints one shared endpoint takes", minimum=2, maximum=50)


@dataclass(frozen=True)
class SharedEndpoint:
    """What a consolidation finding is about: the endpoint it would create."""

    account_id: str
    region: str
    name: str


def group_key(member: CandidateLoad, catalog: Catalog) -> tuple[Any, ...] | None:
    """Models that may share instances: the same network, encryption and role, and the same kind of
    shape (accelerator model, architecture). None: not read, or not groupable (`shape_key`)."""
    shaped = shape_key(member, catalog)
    if shaped is None or member.network is None:
        return None
    network = member.network
    return (tuple(sorted(network.subnets)), tuple(sorted(network.security_groups)), network.network_isolation,
            network.execution_role, *shaped)


def best_group(members: list[CandidateLoad], catalog: Catalog, settings: ConsolidationSettings,
               config: AuditConfig) -> SharedFleet | None:
    """The shared fleet for these members; where it does not save more than their own plans, the
    member whose own plan saves most (the strongest alternative) is left out and the rest tried
    again, while two or more are left."""
    members = sorted(members, key=lambda m: (m.own_saving_usd, m.monthly_cost_usd, m.endpoint))
    while len(members) >= 2:
        fleet = _fleet(members, catalog, settings, config)
        if fleet is not None and proposable(fleet, settings, config):
            # The same group, its members in name order (the order the plan lists and creates them).
            ordered = _fleet(sorted(members, key=lambda m: m.endpoint), catalog, settings, config)
            return ordered if ordered is not None and proposable(ordered, settings, config) else fleet
        members = members[:-1]
    return None


def _fleet(members: list[CandidateLoad], catalog: Catalog, settings: ConsolidationSettings,
           config: AuditConfig) -> SharedFleet | None:
    return cheapest_fleet(members, catalog, settings.copies_per_model, settings.min_shared_instances,
                          settings.target_utilization, config.recommend.allow_burstable)


def proposable(fleet: SharedFleet, settings: ConsolidationSettings, config: AuditConfig) -> bool:
    """The replay's peak under the target, a saving beyond the members' own plans together, and at
    least recommend.min_savings_percent of what they cost now."""
    under = all(r.peak < settings.target_utilization for r in fleet.replays)
    worth = fleet.saving_usd >= fleet.current_usd * config.recommend.min_savings_percent / 100.0
    return under and worth and fleet.saving_usd > 0 and fleet.margin_usd > 0


def already_consolidated(fleet: EndpointFleet) -> set[str]:
    """Endpoints a shared endpoint already hosts (an inference component named after each, on an
    endpoint named as this rule names them): applied, their callers moving; their idle verdicts
    follow, and no second consolidation is proposed for them."""
    return {c.name for e in fleet.endpoints if e.name.startswith(SHARED_PREFIX) for c in e.inference_components}


def names_taken(fleet: EndpointFleet) -> set[str]:
    """Inference component names other endpoints use: a member's component is named after it, and a
    component's name is unique in an account and region, so such a member cannot join."""
    return {c.name for e in fleet.endpoints if not e.name.startswith(SHARED_PREFIX) for c in e.inference_components}


def check(fleet: EndpointFleet, catalog: Catalog, config: AuditConfig) -> Iterator[Finding]:
    settings: ConsolidationSettings = settings_of(RULE, config)
    groups: dict[tuple[Any, ...], list[CandidateLoad]] = defaultdict(list)
    left_out = already_consolidated(fleet) | names_taken(fleet)
    for member in fleet.candidates:
        if member.excluded or member.endpoint in left_out or any(fnmatchcase(member.endpoint, p)
                                                                 for p in settings.skip_endpoints):
            continue
        key = group_key(member, catalog)
        if key is not None:
            groups[key].append(member)
    for _, members in sorted(groups.items(), key=lambda kv: min(m.endpoint for m in kv[1])):
        members.sort(key=lambda m: m.endpoint)
        for start in range(0, len(members), settings.max_members):
            shared = best_group(members[start:start + settings.max_members], catalog, settings, config)
            if shared is not None:
                yield consolidation_finding(shared, settings)


def _percent_text(fleet: SharedFleet) -> str:
    parts = [f"{RESOURCE_LABELS[r.resource]} {r.peak:g}% (p95 {r.p95:g}%, headroom {r.headroom_at_peak:g}%; "
             f"{r.sum_of_peaks:g}% were every peak at one hour)" for r in fleet.replays]
    return join_words(parts)


def consolidation_finding(shared: SharedFleet, settings: ConsolidationSettings) -> Finding:
    first = shared.members[0]
    name = shared_name(m.endpoint for m in shared.members)
    names = [m.endpoint for m in shared.members]
    listed = ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
    details = consolidation_details(shared, name, settings)
    message = (
        f"{len(names)} single-model endpoints ({listed}) can share {shared.count} x {shared.shape.instance_type} "
        f"as inference components of a new endpoint {name}: ${shared.current_usd:,.2f} a month now becomes "
        f"${shared.monthly_usd:,.2f}, saving ${shared.saving_usd:,.2f} a month, ${shared.margin_usd:,.2f} more "
        f"than their own plans together (${shared.own_savings_usd:,.2f}, which it includes). Replayed "
        f"hour by hour on it, their summed load peaks at {_percent_text(shared)}. Callers switch to "
        f"InvokeEndpoint(EndpointName={name}, InferenceComponentName=<their endpoint's name>); the old endpoints "
        "are deleted by later runs once idle."
    )
    finding = RULE.finding(SharedEndpoint(first.account_id, first.region, name), None, message, {
        "members": details["members"], "shared": details["shared"], "replay": details["replay"],
        "group_monthly_usd": shared.current_usd, "own_plans_saving_usd": shared.own_savings_usd,
        "saving_usd": shared.saving_usd, "packed_instances": shared.packed, "copies_per_model": shared.copies,
        "target_utilization": settings.target_utilization, "busy_percent": settings.busy_percent,
    })
    # The group's cost now minus the shared fleet's. The members' own plans stay in the report beside
    # it (each is what to do if the callers cannot switch); the plan covers them (Plan.covers), so the
    # run's saving counts this one and not theirs again.
    recommendation = Recommendation("consolidate", shared.shape.instance_type, shared.count, shared.current_usd,
                                    shared.monthly_usd, details=details)
    return priced(finding, recommendation)


def consolidation_details(shared: SharedFleet, name: str, settings: ConsolidationSettings) -> dict[str, Any]:
    """The recommendation's details (design C2): members, the shared endpoint, the replay, the
    change as AWS requests (its Tags get `auditor:plan` once the plan has its id), rollback, risk,
    and the callers' switch."""
    config_name = f"{name}-config"
    total_now = sum(m.instance_count for m in shared.members)
    maximum = max(shared.count, total_now)
    members = [{
        "endpoint": m.endpoint, "endpoint_config": m.endpoint_config, "status": m.status, "variant": m.variant,
        "model": m.model, "instance_type": m.instance_type, "instance_count": m.instance_count,
        "monthly_cost_usd": m.monthly_cost_usd, "own_plan_monthly_usd": m.own_plan_monthly_usd,
        "component": m.endpoint, "copies": shared.copies, "compute": compute_requirements(r),
        "peak_percent": m.peak_percent,
        # The role its model runs with as the audit read it (DescribeModel): the one the shared
        # config passes (apply holds the config to it).
        "execution_role": (m.network or ModelNetwork()).execution_role,
    } for m, r in zip(shared.members, shared.reservations, strict=True)]
    tags = _common_tags(shared.members)
    first = shared.members[0]
    variant: dict[str, Any] = {
        "VariantName": SHARED_VARIANT, "InstanceType": shared.shape.instance_type,
        "InitialInstanceCount": shared.count,
        "ManagedInstanceScaling": {"Status": "ENABLED", "MinInstanceCount": shared.count,
                                   "MaxInstanceCount": maximum, "ScaleInPolicy": {"Strategy": "CONSOLIDATION"}},
        "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"},
    }
    config_params: dict[str, Any] = {"EndpointConfigName": config_name, "ProductionVariants": [variant]}
    network = first.network or ModelNetwork()  # grouped members were all read (group_key)
    if network.execution_role:
        config_params["ExecutionRoleArn"] = network.execution_role
    if first.kms_key:
        config_params["KmsKeyId"] = first.kms_key
    if network.vpc:
        config_params["VpcConfig"] = network.vpc
    if network.network_isolation:
        config_params["EnableNetworkIsolation"] = True
    config_params["Tags"] = tags
    calls: list[dict[str, Any]] = [
        {"service": "sagemaker", "operation": "CreateEndpointConfig", "params": config_params,
         "purpose": f"create {config_name}: {shared.count} x {shared.shape.instance_type} for inference components, "
                    "managed instance scaling with consolidating scale-in"},
        {"service": "sagemaker", "operation": "CreateEndpoint",
         "params": {"EndpointName": name, "EndpointConfigName": config_name, "Tags": tags},
         "purpose": f"create the shared endpoint {name}"},
    ]
    for member in members:
        calls.append({
            "service": "sagemaker", "operation": "CreateInferenceComponent",
            "params": {"InferenceComponentName": member["component"], "EndpointName": name,
                       "VariantName": SHARED_VARIANT,
                       "Specification": {"ModelName": member["model"],
                                         "ComputeResourceRequirements": member["compute"]},
                       "RuntimeConfig": {"CopyCount": shared.copies}, "Tags": tags},
            "purpose": f"host model {member['model']} of {member['endpoint']} on {name}: {shared.copies} copies",
        })
    gpu = any(r.resource is Resource.GPU for r in shared.replays)
    replay = {r.resource.value: r.as_dict() for r in shared.replays}
    return {
        "advice": f"consolidate {len(members)} endpoints onto {shared.count} x {shared.shape.instance_type} ({name})",
        "group_monthly_usd": shared.current_usd,
        "saving_usd": shared.saving_usd,  # the members' cost now less the shared fleet's
        "own_plans_saving_usd": shared.own_savings_usd,
        "members": members,
        "shared": {"endpoint": name, "endpoint_config": config_name, "variant": SHARED_VARIANT,
                   "instance_type": shared.shape.instance_type, "instance_count": shared.count,
                   "min_instances": shared.count, "max_instances": maximum},
        "replay": {"hours": round(float(measured_periods(shared.members).sum()) * first.period_seconds / 3600.0, 1),
                   "target_percent": settings.target_utilization, "resources": replay},
        "change": calls,
        "rollback": (f"by hand, once no caller uses it: delete each inference component "
                     f"({', '.join(str(m['component']) for m in members)}), then endpoint {name}, then endpoint config "
                     f"{config_name} (DeleteInferenceComponent, DeleteEndpoint, DeleteEndpointConfig); the old "
                     "endpoints are not touched"),
        "waits_for": f"endpoint {name} InService, then its inference components InService",
        "risk": {"level": "high" if gpu else "medium",
                 "basis": [CALLERS_SWITCH, LOAD_TEST_FIRST,
                           *(["accelerator models share an instance's devices: throughput per device is not "
                              "in the replay"] if gpu else [])]},
        "callers": [f"InvokeEndpoint(EndpointName={name}, InferenceComponentName={m['component']}) instead of "
                    f"InvokeEndpoint(EndpointName={m['endpoint']})" for m in members],
    }


def _common_tags(members: Sequence[CandidateLoad]) -> list[dict[str, str]]:
    """The tags every member carries with the same value (owner, env), as a request's Tags."""
    common = dict(members[0].tags)
    for member in members[1:]:
        common = {k: v for k, v in common.items() if member.tags.get(k) == v}
    return settable_tags(common)


RULE = CollectionRule(
    id=RULE_ID,
    title="Small endpoints that could share instances as inference components",
    severity=Severity.MEDIUM,
    remediation="Create one endpoint for inference components (managed instance scaling, consolidating "
                "scale-in), one component per model, switch each caller to InvokeEndpoint with "
                "InferenceComponentName, then delete the old endpoints once idle.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-deploy-models.html",
    judges=frozenset({Judged.REAL_TIME}),
    resource_type=SHARED_TYPE,
    settings=ConsolidationSettings,
    assessment=EndpointFleet,
    check=check,
)
