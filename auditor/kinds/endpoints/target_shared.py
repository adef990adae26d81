"""The shared endpoint a consolidation plan creates (resource type "shared-endpoint", rule
consolidate-onto-components): its apply target, its fresh evidence and what the next run checks.

Apply creates the shared endpoint only: its endpoint config (one component-style variant), the
endpoint, then one inference component per member endpoint, each pointing at the model the member
runs. It never deletes or updates a member endpoint: their deletes come from later runs, once their
traffic has moved (idle, as usual).

- Read now (`observe`): each member endpoint (DescribeEndpoint, and DescribeEndpointConfig of the
  config it runs: the model of its variant), the shared endpoint if it exists (and its tags), and
  each inference component the plan names (DescribeInferenceComponent).
- Unchanged since the audit (`changed`): every member InService on the config the plan was made on,
  running the model the plan was made on; the shared endpoint absent, or made by this plan (its tag
  `auditor:plan`: a retry continues from what exists); no component name taken by anything else.
- Waits (`settle`): for the shared endpoint InService (the components are created only then), and
  after them (`settle_after`) for each component InService; a component that fails gives its
  FailureReason.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from auditor.collect.session import AwsClients, describe_client_error
from auditor.config import ApplyConfig
from auditor.history.store import AppliedChange
from auditor.kinds.endpoints.models import Endpoint
from auditor.recommend.change import PLAN_TAG
from auditor.text import one_line
from auditor.write.evidence import PERIOD_SECONDS, EvidenceCheck, Since, metric_data, query
from auditor.write.plan import ApplyRefused, PlanToApply
from auditor.write.target import ERRORS, Observed, Target, Waiting, gone, poll
from auditor.write.verify import Evidence, params_of

SHARED_TYPE = "shared-endpoint"
SHARED_PREFIX = "consolidated-"


def shared_name(members: list[str]) -> str:
    """The shared endpoint's name: `consolidated-` and the first 10 hex of the sha256 of the sorted
    member endpoint names, one a line (design C2; the rule names it so), so the members are held to
    the plan's resource (and id)."""
    digest = hashlib.sha256("\n".join(sorted(members)).encode()).hexdigest()
    return f"{SHARED_PREFIX}{digest[:10]}"


def members_of(plan: PlanToApply) -> list[dict[str, Any]]:
    """The member endpoints as the plan's basis records them (endpoint, endpoint_config, status,
    variant, model)."""
    members = (plan.basis or {}).get("members")
    return [m for m in members if isinstance(m, dict)] if isinstance(members, list) else []


def component_calls(plan: PlanToApply) -> list[dict[str, Any]]:
    return [c.params for c in plan.calls_of("sagemaker", "CreateInferenceComponent")]


def _status_of(described: Mapping[str, Any] | None) -> str:
    return "absent" if described is None else str(described.get("EndpointStatus") or "")


class SharedEndpointTarget(Target):
    """A new endpoint hosting one inference component per member endpoint."""

    noun = "shared endpoint"
    in_progress: frozenset[str] = frozenset({"Creating", "Updating", "SystemUpdating"})
    reads = frozenset({
        ("sagemaker", "DescribeEndpoint"),  # the members and the shared endpoint
        ("sagemaker", "DescribeEndpointConfig"),  # the model each member runs
        ("sagemaker", "DescribeInferenceComponent"),  # the names the components take, then their wait
        ("sagemaker", "ListTags"),  # who made a shared endpoint that exists (auditor:plan)
    })
    component_in_progress = frozenset({"Creating", "Updating"})

    def opt_in_patterns(self, config: ApplyConfig) -> tuple[tuple[str, ...], str]:
        return (*config.resources, *config.endpoints), "[apply] endpoints or [apply] resources"

    def opt_in_resources(self, plan: PlanToApply, observed: Observed) -> list[tuple[str, str, str]]:
        """Every member endpoint must be opted in (the plan acts for them: what it creates takes
        their traffic); the shared endpoint does not exist to carry a tag."""
        members: dict[str, Any] = observed.described.get("Members") or {}
        return [(f"member endpoint {one_line(name)}", str((member.get("Endpoint") or {}).get("EndpointArn") or ""),
                 name) for name, member in members.items()]

    def plan_problem(self, plan: PlanToApply) -> str | None:
        members = members_of(plan)
        if not members:
            return "it does not record its member endpoints (basis.members): run the audit again"
        names = [str(m.get("endpoint")) for m in members]
        if shared_name(names) != plan.resource.name:
            return (f"its members ({', '.join(one_line(n) for n in sorted(names))}) are not those shared endpoint "
                    f"{one_line(plan.resource.name)} is named for: the stored plan was edited; run the audit again")
        if not plan.calls_of("sagemaker", "CreateEndpoint"):
            return "it creates no endpoint (CreateEndpoint)"
        return None

    def observe(self, clients: AwsClients, plan: PlanToApply) -> Observed:
        api = clients.client("sagemaker", plan.resource.region)
        members: dict[str, dict[str, Any]] = {}
        for member in members_of(plan):
            name = str(member.get("endpoint"))
            described = self._maybe(plan, "DescribeEndpoint", partial(api.describe_endpoint, EndpointName=name))
            config = None
            if described is not None and described.get("EndpointConfigName") == member.get("endpoint_config"):
                config = self._maybe(plan, "DescribeEndpointConfig", partial(
                    api.describe_endpoint_config, EndpointConfigName=str(member.get("endpoint_config"))))
            members[name] = {"Endpoint": described, "Config": config}
        shared = self._maybe(plan, "DescribeEndpoint", partial(api.describe_endpoint, EndpointName=plan.resource.name))
        tags: dict[str, str] = {}
        if shared is not None:
            arn = str(shared.get("EndpointArn"))
            tags = self.read(plan, "ListTags", lambda: {
                str(t["Key"]): str(t["Value"]) for page in api.get_paginator("list_tags").paginate(ResourceArn=arn)
                for t in page.get("Tags", [])})
        components = {}
        for params in component_calls(plan):
            name = str(params.get("InferenceComponentName"))
            components[name] = self._maybe(plan, "DescribeInferenceComponent", partial(
                api.describe_inference_component, InferenceComponentName=name))
        return Observed(str((shared or {}).get("EndpointArn") or ""), _status_of(shared),
                        {"Shared": shared, "SharedTags": tags, "Members": members, "Components": components})

    def _maybe(self, plan: PlanToApply, operation: str, call: Callable[[], Any]) -> dict[str, Any] | None:
        """A Describe call's answer; None when AWS says the resource is not there."""
        try:
            return dict(call())
        except ERRORS as exc:
            if gone(exc):
                return None
            problem = describe_client_error(exc, "sagemaker", operation, plan.resource.region)
            raise ApplyRefused(f"{self.named(plan)}: {problem}") from None

    def changed(self, plan: PlanToApply, observed: Observed) -> str | None:
        members: dict[str, dict[str, Any]] = observed.described.get("Members") or {}
        for member in members_of(plan):
            name = str(member.get("endpoint"))
            who = f"member endpoint {one_line(name)}"
            seen = members.get(name) or {}
            described = seen.get("Endpoint")
            if described is None:
                return f"{who} is gone: run the audit again"
            config = str(described.get("EndpointConfigName") or "")
            if config != member.get("endpoint_config"):
                return (f"{who} changed since the audit: its config is now {one_line(config)!r}, the plan was made on "
                        f"{one_line(str(member.get('endpoint_config')))!r}; run the audit again")
            status = str(described.get("EndpointStatus") or "")
            if status != "InService":
                return f"{who} is {one_line(status)}, not InService: nothing is made while it is"
            variants = {str(v.get("VariantName")): v for v in (seen.get("Config") or {}).get("ProductionVariants")
                        or []}
            model = (variants.get(str(member.get("variant"))) or {}).get("ModelName")
            if model != member.get("model"):
                return (f"{who} runs model {one_line(str(model))} on variant {one_line(str(member.get('variant')))}, "
                        f"not {one_line(str(member.get('model')))} as the plan was made on; run the audit again")
        shared = observed.described.get("Shared")
        tags: dict[str, str] = observed.described.get("SharedTags") or {}
        if shared is not None and tags.get(PLAN_TAG) != plan.id:
            made_by = f"plan {one_line(tags[PLAN_TAG])}" if PLAN_TAG in tags else "no plan (no tag auditor:plan)"
            return (f"shared endpoint {one_line(plan.resource.name)} exists and was made by {made_by}, not by plan "
                    f"{plan.id}: nothing is made")
        for name, component in (observed.described.get("Components") or {}).items():
            if component is not None and component.get("EndpointName") != plan.resource.name:
                return (f"inference component {one_line(name)} exists on endpoint "
                        f"{one_line(str(component.get('EndpointName')))}: the name is taken; nothing is made")
        return None

    def doing(self, clients: AwsClients, plan: PlanToApply) -> str:
        try:
            observed = self.observe(clients, plan)
        except ApplyRefused as exc:
            return f"its state could not be read ({exc})"
        name, status = one_line(plan.resource.name), one_line(observed.status)
        if observed.status == "absent":
            return f"shared endpoint {name} was not created"
        going = [f"{one_line(n)} {one_line(str(c.get('InferenceComponentStatus')))}"
                 for n, c in (observed.described.get("Components") or {}).items() if c is not None]
        said = f"shared endpoint {name} is {status}"
        if observed.status in self.in_progress:
            said += "; its creation goes on"
        return said + (f"; inference components: {', '.join(going)}" if going else "")

    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        """The shared endpoint InService (created or found by a retry); Failed gives its reason."""
        api = clients.client("sagemaker", plan.resource.region)
        outcome, message, _ = poll(plan, Waiting(
            self.named(plan), "DescribeEndpoint", lambda: api.describe_endpoint(EndpointName=plan.resource.name),
            "EndpointStatus", done="InService", in_progress=frozenset({"Creating"}),
            at_deadline="its creation goes on; a retry of the plan continues from it"), wait_minutes, sleep, clock)
        return outcome, message

    def settle_after(self, clients: AwsClients, plan: PlanToApply, wait_minutes: float,
                     sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str] | None:
        """Each inference component InService, one after the other within one deadline; the first that
        fails gives its FailureReason."""
        api = clients.client("sagemaker", plan.resource.region)
        names = [str(p.get("InferenceComponentName")) for p in component_calls(plan)]
        started = clock()
        for name in names:
            left = wait_minutes - (clock() - started) / 60
            outcome, message, _ = poll(plan, Waiting(
                f"inference component {one_line(name)}", "DescribeInferenceComponent",
                partial(api.describe_inference_component, InferenceComponentName=name),
                "InferenceComponentStatus", done="InService", in_progress=self.component_in_progress,
                at_deadline="its creation goes on; a retry of the plan continues from it"), max(left, 0.0), sleep,
                clock)
            if outcome != "applied":
                return outcome, message
        listed = ", ".join(one_line(n) for n in names)
        return "applied", (f"plan {plan.id} applied: shared endpoint {one_line(plan.resource.name)} is InService "
                           f"hosting {len(names)} inference component{'s' if len(names) != 1 else ''} ({listed}); "
                           "the member endpoints are unchanged: callers move to InvokeEndpoint with "
                           "InferenceComponentName before their deletes are proposed")


TARGETS: dict[str, Target] = {SHARED_TYPE: SharedEndpointTarget()}


# --- fresh evidence: no member busier than its copies reserve ---------------------------------------


def _reserved_cores(plan: PlanToApply) -> dict[str, float]:
    """Each member's CPU cores its copies reserve (NumberOfCpuCoresRequired x copies), from the
    plan's CreateInferenceComponent calls (component = the member endpoint's name)."""
    reserved = {}
    for params in component_calls(plan):
        spec = params.get("Specification") or {}
        cores = (spec.get("ComputeResourceRequirements") or {}).get("NumberOfCpuCoresRequired")
        copies = (params.get("RuntimeConfig") or {}).get("CopyCount")
        if isinstance(cores, int | float) and isinstance(copies, int) and not isinstance(copies, bool):
            reserved[str(params.get("InferenceComponentName"))] = float(cores) * copies
    return reserved


def shared_since(since: Since) -> str | None:
    """Since the audit's window ended, each member's CPU (CPUUtilization Maximum, the sum over its
    vCPUs: 100 per core busy) must stay within the cores its copies reserve on the shared fleet:
    a member that grew since the audit would not fit what the plan packs."""
    plan = since.plan
    reserved = _reserved_cores(plan)
    members = [m for m in members_of(plan) if str(m.get("endpoint")) in reserved]
    queries = [query(f"cpu{i}", "/aws/sagemaker/Endpoints", "CPUUtilization",
                     {"EndpointName": str(m.get("endpoint")), "VariantName": str(m.get("variant"))}, "Maximum",
                     PERIOD_SECONDS) for i, m in enumerate(members)]
    if not queries:
        return None
    found = metric_data(since, queries)
    for index, member in enumerate(members):
        name = str(member.get("endpoint"))
        busiest = max((v for _, v in found.get(f"cpu{index}", [])), default=None)
        if busiest is not None and busiest / 100 > reserved[name]:
            return (f"member endpoint {one_line(name)} used up to {busiest / 100:.2f} CPU cores {since.when}, more "
                    f"than its copies reserve on the shared endpoint ({reserved[name]:g}); run the audit again")
    return None


EVIDENCE: dict[str, EvidenceCheck] = {
    SHARED_TYPE: EvidenceCheck(frozenset({"CreateInferenceComponent"}), shared_since,
                               reads=frozenset({("cloudwatch", "GetMetricData")})),
}


# --- what the next run checks ------------------------------------------------------------------------


def shared_done(change: AppliedChange, evidence: Evidence) -> bool:
    """The shared endpoint InService hosting every component the change created, each InService."""
    endpoint: Endpoint | None = evidence.found(change, SHARED_TYPE)
    if endpoint is None or endpoint.status != "InService":
        return False
    hosted = {c.name: c.status for c in endpoint.inference_components}
    names = {str(p.get("InferenceComponentName")) for p in params_of(change, "sagemaker", "CreateInferenceComponent")}
    return bool(names) and all(hosted.get(name) == "InService" for name in names)


VERIFIERS = {SHARED_TYPE: shared_done}
